//! One compaction, start to end: the lease, the run through the steps, the provider calls with
//! their retries and cancellation, and the record of a failure.

use super::*;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Runs one compaction. Whatever the error, the logs are as before (plus any appends).
    pub async fn compact(&self, trigger: Trigger) -> Result<CompactionResult, CompactionError> {
        self.compact_until(trigger, Cancel::default()).await
    }

    /// Runs one compaction that `cancel` (or [`Compactor::abort`]) stops with
    /// [`CompactionError::Aborted`] until its archive is written; after that it completes.
    pub async fn compact_until(
        &self,
        trigger: Trigger,
        cancel: Cancel,
    ) -> Result<CompactionResult, CompactionError> {
        if self.busy.get() {
            return Err(CompactionError::Busy(
                "A compaction is already running; wait for it to finish.".into(),
            ));
        }
        if cancel.is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        self.busy.set(true);
        self.current.begin(self.now(), cancel);
        let outcome = self.compact_leased(trigger).await;
        self.busy.set(false);
        outcome
    }

    /// Cancels the running compaction, if any (see [`Compactor::compact_until`]).
    pub fn abort(&self) {
        if self.busy.get() {
            self.current.cancel.borrow().cancel();
        }
    }

    /// Sleeps `ms`, or less when the compaction is cancelled meanwhile.
    pub(super) async fn pause(&self, ms: u32) -> Result<(), CompactionError> {
        let cancel = self.current.cancel.borrow().clone();
        race_deadline(self.timer.sleep(ms), cancel.cancelled())
            .await
            .ok_or(CompactionError::Aborted)
    }

    /// Takes the lease, runs the compaction, records a failure and gives the lease back, each
    /// write under the store lock.
    pub(super) async fn compact_leased(
        &self,
        trigger: Trigger,
    ) -> Result<CompactionResult, CompactionError> {
        let held = self.lock.acquire().await?;
        self.take_lease()?;
        let outcome = self.run(trigger, held).await;
        // Without the lock the lease still goes: an expired lease would block for hours.
        let held = self.lock.acquire().await.ok();
        if let Err(err) = &outcome {
            self.fail(err, trigger);
        }
        self.frozen.set(false);
        self.release_lease();
        drop(held);
        outcome
    }

    pub(super) fn fail(&self, err: &CompactionError, trigger: Trigger) {
        let stopped_in = self.phase.get();
        let recorded = !matches!(
            err,
            CompactionError::NotAllowed(_) | CompactionError::Aborted
        );
        if recorded {
            let attempts = self.current.attempt.get();
            let at = iso_timestamp(self.now());
            // Metrics are a record, not part of the logs: failing to update them must not
            // hide the error being reported.
            let usage = self.current.usage.get();
            let _ = self.update_metrics(|m| {
                m.record_failure(err.code().as_str(), attempts, at);
                m.record_usage(usage);
            });
        }
        if !matches!(err, CompactionError::NotAllowed(_)) {
            self.frozen.set(false);
            self.set_phase(Phase::Error);
        }
        if trigger == Trigger::Auto {
            let tokens = self.logs.borrow().estimate_tokens().unwrap_or(0);
            let mut guard = self.guard.get();
            guard.hold(&self.settings, tokens);
            self.guard.set(guard);
        }
        self.emit(CompactionEvent::Error {
            code: err.code().as_str(),
            message: err.to_string(),
            phase: stopped_in,
        });
    }

    /// The compaction itself; `held` is the store lock taken with the lease, given up while
    /// the provider works and taken again for the archive and the swap.
    pub(super) async fn run(
        &self,
        trigger: Trigger,
        held: LockHeld,
    ) -> Result<CompactionResult, CompactionError> {
        // A journal left by an interrupted compaction is settled before a new one starts (a
        // corrupt one stops it: its archive key must not be guessed). We hold the lease.
        self.settle_journal()?;
        let (read, placed, input) = self.read_state()?;
        let input = RuleInput {
            compacting: false,
            ..input
        };
        if let Some(reason) = refusal(&self.settings, &input, trigger) {
            return Err(CompactionError::NotAllowed(reason));
        }
        self.emit(CompactionEvent::Start {
            trigger,
            iteration: input.current_iteration,
            context_usage: input.usage,
        });
        // Other tabs append while the model works; the swap picks their entries up.
        drop(held);
        let waits = self.logs.borrow().iteration_running();
        if waits {
            self.set_phase(Phase::Waiting);
            while self.logs.borrow().iteration_running() {
                self.pause(WAIT_POLL_MS).await?;
                self.renew_lease();
            }
        }
        self.set_phase(Phase::Freezing);
        self.frozen.set(true);

        self.set_phase(Phase::Gathering);
        // Without a wait the logs read for the rules are the ones to compact (appends made
        // meanwhile are picked up before the swap); after a wait they are read again.
        let (before, placed, input) = if waits {
            let (read, placed, input) = self.read_state()?;
            if let Some(reason) = refusal(
                &self.settings,
                &RuleInput {
                    compacting: false,
                    ..input
                },
                trigger,
            ) {
                return Err(CompactionError::NotAllowed(reason));
            }
            (read, placed, input)
        } else {
            (read, placed, input)
        };
        let tokens_before = input.log_tokens;
        let usage_before = input.usage;
        let selection = Selection::placed(&before.parsed, &placed);
        if selection.is_empty() {
            return Err(CompactionError::NotAllowed(
                "Nothing to compact: only the current iteration has entries.".into(),
            ));
        }
        let compacted_tokens = input.summary_tokens + input.new_tokens;

        self.set_phase(Phase::BuildingPrompt);
        let ledger = self.ledger_of(&selection)?;
        let prompt = build_prompt(&selection, &self.settings, &ledger);
        let summary = self
            .summarise(&prompt, &selection, &ledger, compacted_tokens)
            .await?;

        let held = self.lock.acquire().await?;
        // The last moment a cancellation is honoured: from here on the compaction completes.
        if self.current.cancel.borrow().is_cancelled() {
            return Err(CompactionError::Aborted);
        }
        self.set_phase(Phase::Archiving);
        let archive_key =
            self.write_archive(&selection, &ledger, trigger, tokens_before, usage_before)?;

        self.set_phase(Phase::Replacing);
        let mut result = self.swap_in(
            &before,
            &selection,
            summary,
            archive_key,
            tokens_before,
            compacted_tokens,
        )?;
        // A reported prompt size described the prompt before the compaction.
        self.reported_tokens.set(None);
        result.coverage = ledger.coverage(&result.summary);
        result.context_usage_before = usage_before;
        result.context_usage_after = self.usage_of(result.tokens_after);
        let (tokens_after, tokens_saved) = (result.tokens_after, result.tokens_saved);

        self.set_phase(Phase::RecordingMetrics);
        let at = iso_timestamp(self.now());
        let _ = self.update_metrics(|m| {
            m.record_success(
                result.reduction,
                result.duration_ms,
                tokens_saved,
                result.attempts,
                at,
            );
            m.record_usage(result.usage);
        });
        let logs = self.logs.borrow();
        // Old archives beyond the limits go now that the new one is safely in place; a failure
        // here leaves an extra archive, never a lost entry.
        let _ = enforce_policy(
            logs.store(),
            &self.keys,
            self.now(),
            self.settings.max_archives,
            Some(&result.archive_key),
        );
        drop(logs);
        let mut guard = self.guard.get();
        if trigger == Trigger::Auto
            && result.context_usage_after >= self.settings.auto_trigger_usage
        {
            guard.hold(&self.settings, tokens_after);
        } else {
            guard.release();
        }
        self.guard.set(guard);

        drop(held);
        self.set_phase(Phase::Unfreezing);
        self.frozen.set(false);
        self.set_phase(Phase::Complete);
        self.emit(CompactionEvent::Complete {
            result: Box::new(result.clone()),
        });
        Ok(result)
    }

    /// Asks the provider, validates, and retries once (per `maxRetries`) telling the model what
    /// was wrong. Returns the canonical summary.
    pub(super) async fn summarise(
        &self,
        prompt: &str,
        selection: &Selection<'_>,
        ledger: &Ledger,
        compacted_tokens: usize,
    ) -> Result<String, CompactionError> {
        let generation = GenerationSettings {
            model: self.provider.model(),
            temperature: self
                .settings
                .temperature
                .unwrap_or(crate::core::settings::DEFAULT_TEMPERATURE),
            temperature_set: self.settings.temperature.is_some(),
            max_output_tokens: self.settings.max_output_tokens,
            timeout_ms: self.settings.timeout_ms,
        };
        let mut attempt_prompt = prompt.to_owned();
        loop {
            let attempt = self.current.attempt.get() + 1;
            self.current.attempt.set(attempt);
            self.set_phase(Phase::Compacting);
            let call = self.provider.generate(&SummaryRequest {
                prompt: &attempt_prompt,
                selection,
                ledger,
                settings: &generation,
            });
            let cancel = self.current.cancel.borrow().clone();
            let timed = race_deadline(call, self.timer.sleep(self.settings.timeout_ms));
            // Dropping the call when cancelled or late lets the provider abort its request.
            let answer = match race_deadline(timed, cancel.cancelled()).await {
                None => return Err(CompactionError::Aborted),
                Some(None) => Err(ProviderError::Timeout {
                    after_ms: self.settings.timeout_ms,
                }),
                Some(Some(answer)) => answer,
            };
            let (error, wait_ms, rejected) = match answer {
                Ok(generation) => {
                    self.count_usage(generation.usage);
                    if generation.model.is_some() {
                        self.current.answered_by.replace(generation.model);
                    }
                    if ledger.is_empty() {
                        self.set_phase(Phase::Validating);
                    } else {
                        let facts = ledger.facts.len();
                        self.set_phase_saying(
                            Phase::Validating,
                            format!("Checking the sections and {facts} facts"),
                        );
                    }
                    let summary = canonicalize(&generation.text);
                    let validation = self.check(&summary, selection.last, ledger, compacted_tokens);
                    if validation.valid {
                        return Ok(summary);
                    }
                    let error = CompactionError::InvalidSummary(validation.errors.clone());
                    (error, self.settings.retry_delay_ms, Some(validation))
                }
                Err(err) => {
                    let (err, usage) = err.split_usage();
                    self.count_usage(usage);
                    if !err.is_retryable() {
                        return Err(CompactionError::Provider(err));
                    }
                    let wait = err
                        .retry_after_ms()
                        .map_or(self.settings.retry_delay_ms, |ms| ms.min(MAX_RETRY_WAIT_MS));
                    let error = match err {
                        ProviderError::Incomplete(reason) => {
                            CompactionError::InvalidSummary(vec![reason])
                        }
                        other => CompactionError::Provider(other),
                    };
                    (error, wait, None)
                }
            };
            if attempt > self.settings.max_retries {
                return Err(error);
            }
            self.announce_retry(&error, attempt + 1, wait_ms);
            self.pause(wait_ms).await?;
            attempt_prompt = match rejected {
                Some(validation) => retry_prompt(prompt, &validation),
                None => prompt.to_owned(),
            };
        }
    }

    /// Adds the tokens an answer reported to this compaction's usage.
    pub(super) fn count_usage(&self, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            let mut total = self.current.usage.get().unwrap_or_default();
            total += usage;
            self.current.usage.set(Some(total));
        }
    }

    /// Tells the app that attempt `next` follows, why, and after how long.
    pub(super) fn announce_retry(&self, error: &CompactionError, next: u32, wait_ms: u32) {
        let reason = match error {
            CompactionError::Provider(err) => err.retry_reason(),
            _ => "invalid_summary".to_owned(),
        };
        let why = match reason.as_str() {
            "invalid_summary" => "The summary was incomplete".to_owned(),
            "http_429" => "The model's API is rate-limited".to_owned(),
            "timeout" => "The model did not answer in time".to_owned(),
            "network" => "The model's API could not be reached".to_owned(),
            other => match error.provider().and_then(ProviderError::status) {
                Some(status) => format!("The model's API answered HTTP {status}"),
                None => format!("The provider failed ({other})"),
            },
        };
        let of = self.settings.max_retries.saturating_add(1);
        let message = format!(
            "{why}; attempt {next} of {of} in {:.1} s",
            f64::from(wait_ms) / 1000.0
        );
        self.emit(CompactionEvent::Retry {
            reason,
            attempt: next,
            wait_ms,
            message: message.clone(),
        });
        self.set_phase_saying(Phase::Retrying, message);
    }

    /// `validateSummary`, every fact of the ledger, and the rule that a compaction must shrink
    /// what it replaces.
    pub(super) fn check(
        &self,
        summary: &str,
        last: u32,
        ledger: &Ledger,
        compacted_tokens: usize,
    ) -> Validation {
        let mut validation = validate_summary(summary);
        for fact in ledger.missing_in(summary) {
            validation.valid = false;
            validation
                .errors
                .push(format!("Missing required fact: {}", fact.text));
        }
        // The archive key is not chosen yet; one of the same length counts the same.
        let key = self.keys.archive(self.now().max(0.0) as u64);
        let summary_tokens = estimate_tokens(&summary_entry(last, &key, summary));
        if summary_tokens as f64 > compacted_tokens as f64 * MAX_SUMMARY_SHARE {
            validation.valid = false;
            validation.errors.push(format!(
                "The summary ({summary_tokens} tokens) is not clearly smaller than the \
                 {compacted_tokens} tokens it replaces; at most {}% is allowed",
                CompactorSettings::whole_percent(MAX_SUMMARY_SHARE)
            ));
        }
        validation
    }
}
