//! The one ending every rung shares: under the store lock taken again (the last moment a
//! cancel is honoured), the archive key, the originals archived (durable before any log
//! changes), the rewrite swapped in under the journal, and the result of it.

use super::run::Run;
use super::run_lock::RunLock;
use super::summarize::Written;
use super::Compactor;
use crate::core::error::CompactionError;
use crate::core::json::write::ToJson;
use crate::core::model::clearing::Rung;
use crate::core::model::outcome::{CompactionResult, Measured, Summarised};
use crate::core::model::phase::Phase;
use crate::core::ports::clock::Clock;
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::storage::KeyValueStore;
use crate::core::run::view::{Observed, Prepared};
use crate::core::steps::clearing::ClearedEntry;
use crate::core::steps::user_words::UserWords;
use crate::core::store::archive_record::{Archive, ArchiveMetadata, SelectedData};
use crate::core::store::journal::Commit;

/// What a rung puts in place of the originals.
pub(super) enum Rewrite<'a> {
    /// A summary of `prepared`'s selection (the model's or the package's own).
    Summary(&'a Prepared<'a>, &'a Written),
    /// Placeholders for the bulky bodies chosen under the lock.
    Clearing,
}

/// A rewrite with its archive, ready to be written.
enum Ready<'a> {
    Summary(Archive<SelectedData<'a>>, &'a Prepared<'a>, &'a Written),
    Clearing(Archive, Vec<ClearedEntry>),
}

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// Ends a rung of `run` over the logs as `observed`: takes `lock` again, honours a cancel
    /// for the last time, archives the originals under a new key and swaps `rewrite` in.
    /// `None` when a clearing finds nothing to clear (the lock is given up again).
    pub(super) async fn end(
        &self,
        run: &mut Run,
        lock: &mut RunLock,
        observed: &Observed,
        rewrite: Rewrite<'_>,
    ) -> Result<Option<CompactionResult>, CompactionError> {
        lock.taken_again(self.shelf.hold().await?);
        run.working_since_ms = self.now();
        // The last moments a cancellation is honoured (here, and as the rung's writing phase
        // begins, for a listener of it): once archived, the rung completes.
        let honour_cancel = |run: &Run| match run.cancel.is_cancelled() {
            true => Err(CompactionError::Aborted),
            false => Ok(()),
        };
        honour_cancel(run)?;
        let (key, timestamp) = self.shelf.next_key()?;
        let lifetime_ms = self.settings.archive_lifetime_ms();
        let originals = self.logs().borrow().originals()?;
        let metadata = ArchiveMetadata {
            context_usage_before: observed.input.usage,
            total_tokens_before: observed.input.log_tokens,
        };
        let ready = match rewrite {
            Rewrite::Summary(prepared, written) => {
                let pinned = (observed.input.pinned_tokens, self.settings.summary_budget());
                if let Some(event) = over_budget(&prepared.user, pinned) {
                    self.events.emit(event);
                }
                self.advance(run, Phase::Archiving, None);
                honour_cancel(run)?;
                let (selection, ledger) = (&prepared.selection, &prepared.ledger);
                let archive = Archive::of(
                    selection,
                    ledger,
                    run.trigger,
                    (timestamp, lifetime_ms),
                    metadata,
                    originals,
                );
                Ready::Summary(archive, prepared, written)
            }
            Rewrite::Clearing => {
                let cleared = self.choose_bodies(run, observed, &key).await?;
                if cleared.is_empty() {
                    lock.give_up();
                    return Ok(None);
                }
                self.advance(run, Phase::Clearing, None);
                honour_cancel(run)?;
                let logs = &observed.read.parsed;
                let archive = Archive::cleared(
                    logs,
                    &cleared,
                    run.trigger,
                    (timestamp, lifetime_ms),
                    metadata,
                    originals,
                );
                Ready::Clearing(archive, cleared)
            }
        };
        let (archive, clearing): (&dyn ToJson, bool) = match &ready {
            Ready::Summary(archive, ..) => (archive, false),
            Ready::Clearing(archive, _) => (archive, true),
        };
        self.shelf.archive(&key, archive, clearing).await?;
        self.events.emit(CompactionEvent::Archived {
            archive_key: key.clone(),
            timestamp,
        });
        run.archived = true;
        self.pause(run).await;
        if let Ready::Summary(..) = ready {
            self.advance(run, Phase::Replacing, None);
        }
        let ran = &*run;
        let before = &observed.read;
        let result = match &ready {
            Ready::Summary(_, prepared, written) => {
                let summary = prepared.user.written_into(&written.accepted.summary);
                let commit = Commit {
                    selection: &prepared.selection,
                    summary: &summary,
                    failed: written.fallback.as_ref().map(|reason| reason.code.as_str()),
                };
                let stored = (*written, summary.as_str());
                let result =
                    |added| self.summary_result(ran, observed, prepared, stored, &key, added);
                self.shelf
                    .swap_in(self.settings.max_archives, &|journal, archives| {
                        journal.swap_in(archives, before, &commit, &key, &result)
                    })
                    .await?
            }
            Ready::Clearing(_, cleared) => {
                let result = |added| self.cleared_result(ran, observed, cleared, &key, added);
                self.shelf
                    .swap_in(self.settings.max_archives, &|journal, archives| {
                        journal.clear_in(archives, before, cleared, &key, &result)
                    })
                    .await?
            }
        };
        Ok(Some(result))
    }

    /// What a rung of `run` measured: `iterations` rewritten, the logs as `observed` before
    /// and `tokens_after` after, the originals under `key`.
    fn measured(
        &self,
        run: &Run,
        observed: &Observed,
        iterations: [u32; 2],
        tokens_after: usize,
        key: &str,
    ) -> Measured {
        let input = &observed.input;
        // A prompt size the app reported described the prompt before the compaction.
        let usage_after = self
            .view(&self.logs().borrow())
            .usage_at(tokens_after, false);
        Measured {
            iterations,
            tokens: [input.log_tokens, tokens_after],
            usage: [input.usage, usage_after],
            duration_ms: self.elapsed(run),
            archive_key: key.to_owned(),
        }
    }

    /// The result of `written`, a summary of `prepared` stored as `summary` (the user's words
    /// written into it) and swapped in under `key`, its entry taking `added` tokens.
    fn summary_result(
        &self,
        run: &Run,
        observed: &Observed,
        prepared: &Prepared<'_>,
        (written, summary): (&Written, &str),
        key: &str,
        added: usize,
    ) -> CompactionResult {
        let input = &observed.input;
        let kept_tokens = input.log_tokens - (input.summary_tokens + input.new_tokens);
        let iterations = [1, prepared.selection.last];
        let measured = self.measured(run, observed, iterations, kept_tokens + added, key);
        let accepted = &written.accepted;
        let asked = &run.attempts;
        let summarised = Summarised {
            summary: summary.to_owned(),
            coverage: accepted.coverage.in_archive(key),
            unverified: accepted.unverified.clone(),
            injections: accepted.injections.clone(),
            answer_format: accepted.answer_format,
            salvaged: accepted.salvaged,
            attempts: asked.count,
            usage: asked.usage,
            model: asked.model.clone(),
            chunks: asked.parts,
            cached: asked.cached,
            fallback: written.fallback.clone(),
            upgraded: written.upgraded,
            user_items: prepared.user.report(&accepted.summary),
        };
        CompactionResult::new(written.rung, measured, summarised, Vec::new())
    }

    /// The result of a clearing that took `cleared` into the archive `key`, `appended` tokens
    /// appended meanwhile.
    fn cleared_result(
        &self,
        run: &Run,
        observed: &Observed,
        cleared: &[ClearedEntry],
        key: &str,
        appended: usize,
    ) -> CompactionResult {
        let freed: usize = cleared.iter().map(|entry| entry.tokens).sum();
        let tokens_after = observed.input.log_tokens.saturating_sub(freed) + appended;
        let numbers = cleared.iter().map(|entry| entry.iteration);
        let iterations = [
            numbers.clone().min().unwrap_or(0),
            numbers.max().unwrap_or(0),
        ];
        let measured = self.measured(run, observed, iterations, tokens_after, key);
        let bodies = cleared.iter().map(ClearedEntry::body).collect();
        CompactionResult::new(Rung::Clear, measured, Summarised::default(), bodies)
    }
}

/// What the event `user_items_over_budget` says of `user` when items left the summary, or of
/// the pins when their tokens (`pinned.0`) exceed the summary's budget (`pinned.1`).
fn over_budget(user: &UserWords, (pins, budget): (usize, usize)) -> Option<CompactionEvent> {
    let (tokens, budget, message) = match user.over {
        Some((tokens, cap)) => (
            tokens,
            cap,
            format!(
                "The user's items take {tokens} tokens, over their share of {cap}: {} of them \
                 (facts and preferences first, rules last) left the summary for lines naming \
                 each, which recall(n) of its source brings back; a larger \
                 summaryBudgetTokens keeps more.",
                user.demoted.len()
            ),
        ),
        None if pins > budget => (
            pins,
            budget,
            format!(
                "The pins take {pins} tokens, over the summary's budget of {budget}: the \
                 summary holds every one and is over its budget by them; unpin facts or raise \
                 summaryBudgetTokens (a compaction the user asks for is refused until then)."
            ),
        ),
        None => return None,
    };
    Some(CompactionEvent::UserItemsOverBudget {
        tokens,
        budget,
        message,
    })
}
