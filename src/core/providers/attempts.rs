//! Asking a provider until an answer passes: one call at a time within `timeoutMs`, each answer
//! judged (`steps::answer`), another attempt after the wait the failure calls for while
//! `maxRetries` allows, cancellation at every wait, and the tokens every answer reported.

use std::future::Future;

use crate::core::error::CompactionError;
use crate::core::model::outcome::AnswerFormat;
use crate::core::model::phase::Phase;
use crate::core::model::reasons::RetryReason;
use crate::core::model::settings::CompactorSettings;
use crate::core::model::token_usage::TokenUsage;
use crate::core::ports::cancel::Cancel;
use crate::core::ports::events::CompactionEvent;
use crate::core::ports::timer::{race_deadline, Timer};
use crate::core::providers::port::{ask, SummaryProvider, SummaryRequest};
use crate::core::steps::answer::{judge, Answered};
use crate::core::steps::check::{Accepted, Verdict};

/// What the attempts are doing, for the app's progress.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptEvent {
    /// A call or a retry's wait still lasts: told every [`PROGRESS_EVERY_MS`], so that the app
    /// sees the compaction alive.
    Still,
    /// Call `attempt` (from 1, counting every call of the compaction) asks the provider.
    Asking {
        /// Its number.
        attempt: u32,
    },
    /// Its answer is checked against the sections and `facts` facts.
    Checking {
        /// Its number.
        attempt: u32,
        /// Facts of the ledger.
        facts: usize,
    },
    /// An answer is taken: of `required` facts the model kept `kept`, the package added the
    /// rest; `unverified` lines were marked.
    Accepted {
        /// Facts of the ledger.
        required: usize,
        /// Facts the model's answer kept.
        kept: usize,
        /// Lines marked ` [unverified]`.
        unverified: usize,
        /// The form the answer came in.
        format: AnswerFormat,
    },
    /// A selection too large for one call: step `step` of `of` summarises one part (the last
    /// step merges them), covering `iterations`.
    Part {
        /// The step, from 1.
        step: usize,
        /// Steps in all: the parts, then the merge.
        of: usize,
        /// The first and last iteration it covers.
        iterations: [u32; 2],
    },
    /// It was rejected and attempt `next` follows after `wait_ms`.
    Retrying {
        /// The attempt about to start.
        next: u32,
        /// Why.
        reason: RetryReason,
        /// The wait before it, in ms.
        wait_ms: u32,
    },
}

impl AttemptEvent {
    /// The phase it enters, its progress message (the phase's own when `None`), and for a
    /// retry the event that announces it (`max_retries` says how many attempts there are).
    pub fn progress(&self, max_retries: u32) -> (Phase, Option<String>, Option<CompactionEvent>) {
        match *self {
            AttemptEvent::Asking { .. } | AttemptEvent::Still => (Phase::Compacting, None, None),
            AttemptEvent::Checking { facts, .. } => {
                let message =
                    (facts > 0).then(|| format!("Checking the sections and {facts} facts"));
                (Phase::Validating, message, None)
            }
            AttemptEvent::Accepted {
                required,
                kept,
                unverified,
                format,
            } => {
                let form = match format {
                    AnswerFormat::Json => "JSON",
                    AnswerFormat::Markdown => "Markdown",
                };
                let mut message =
                    format!("{form} answer read; the model kept {kept} of {required} facts");
                if kept < required {
                    let added = required - kept;
                    message.push_str(&format!("; {added} added in the ledger's words"));
                }
                if unverified > 0 {
                    message.push_str(&format!("; {unverified} lines marked [unverified]"));
                }
                (Phase::Validating, Some(message), None)
            }
            AttemptEvent::Part {
                step,
                of,
                iterations: [first, last],
            } => {
                let message = if step < of {
                    format!(
                        "Summarising part {step} of {} (iterations {first}–{last})",
                        of - 1
                    )
                } else {
                    format!("Merging the parts (iterations {first}–{last})")
                };
                (Phase::Compacting, Some(message), None)
            }
            AttemptEvent::Retrying {
                next,
                reason,
                wait_ms,
            } => {
                let message = reason.announcement(next, max_retries.saturating_add(1), wait_ms);
                let announced = CompactionEvent::Retry {
                    reason: reason.name(),
                    attempt: next,
                    wait_ms,
                    message: message.clone(),
                };
                (Phase::Retrying, Some(message), Some(announced))
            }
        }
    }
}

/// What the attempts cost and who answered, whatever their outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempts {
    /// Provider calls made.
    pub count: u32,
    /// Tokens the answers reported, failed ones included (`None` when none reported any).
    pub usage: Option<TokenUsage>,
    /// The model that answered last, when the provider says.
    pub model: Option<String>,
    /// Parts the selection was summarised in (1 when it fit one call).
    pub parts: u32,
    /// Whether the summary came from the cache (`count` is then 0).
    pub cached: bool,
}

impl Default for Attempts {
    fn default() -> Self {
        Attempts {
            count: 0,
            usage: None,
            model: None,
            parts: 1,
            cached: false,
        }
    }
}

/// Who is asked, with what limits, and what stops the asking.
pub struct Asking<'a> {
    /// The provider.
    pub provider: &'a dyn SummaryProvider,
    /// The timer of the time limit and the waits.
    pub timer: &'a dyn Timer,
    /// `timeoutMs`, `maxRetries`, `retryDelayMs`.
    pub settings: &'a CompactorSettings,
    /// Stops the asking at the next wait.
    pub cancel: Cancel,
}

impl Asking<'_> {
    /// Asks until an answer passes `check` (given the reasons of the retries so far), no
    /// attempt is left, or the asking is cancelled; `report` hears each step. When no attempt
    /// is left, the last mended answer a retry was asked instead of is taken, if there is one.
    /// `attempts` holds the cost whatever the outcome.
    pub async fn summarise(
        &self,
        request: &SummaryRequest<'_>,
        attempts: &mut Attempts,
        check: impl Fn(&str, &[RetryReason]) -> Verdict,
        mut report: impl FnMut(AttemptEvent),
    ) -> Result<Accepted, CompactionError> {
        let settings = self.settings;
        let mut prompt = request.prompt.to_owned();
        let mut retried: Vec<RetryReason> = Vec::new();
        let mut fallback: Option<Box<Accepted>> = None;
        // The answer the last attempt rejected: the same again means asking cannot help.
        let mut rejected_answer: Option<String> = None;
        let mut attempt = 0;
        loop {
            attempts.count += 1;
            attempt += 1;
            report(AttemptEvent::Asking {
                attempt: attempts.count,
            });
            let asked = SummaryRequest {
                prompt: &prompt,
                ..*request
            };
            let cancelled = self.cancel.cancelled();
            let answer = ask(
                self.provider,
                &asked,
                self.timer,
                settings.timeout_ms,
                cancelled,
            );
            let answer = self.beating(answer, &mut report).await;
            let text = match answer.ok_or(CompactionError::Aborted)? {
                Ok(generation) => {
                    TokenUsage::add_to(&mut attempts.usage, generation.usage);
                    attempts.model = generation.model.or(attempts.model.take());
                    let facts = request.ledger.facts.len();
                    report(AttemptEvent::Checking { attempt, facts });
                    Ok(Answered {
                        text: generation.text,
                        cut: generation.cut,
                    })
                }
                Err(failure) => {
                    TokenUsage::add_to(&mut attempts.usage, failure.usage);
                    Err(failure.error)
                }
            };
            let answered = text.as_ref().ok().map(|answer| answer.text.clone());
            let judged = judge(text, request.prompt, settings.retry_delay_ms, |summary| {
                check(summary, &retried)
            });
            let mut rejected = match judged {
                Ok(accepted) => return Ok(announced(accepted, &mut report)),
                Err(rejected) => rejected,
            };
            if let (Some(answer), CompactionError::InvalidSummary(errors)) =
                (&answered, &mut rejected.error)
            {
                if rejected_answer.as_ref() == Some(answer) {
                    rejected.error = CompactionError::SameInvalidSummary(std::mem::take(errors));
                    rejected.retry = None;
                }
            }
            rejected_answer = answered;
            fallback = rejected.fallback.or(fallback);
            let Some(retry) = rejected.retry.filter(|_| attempt <= settings.max_retries) else {
                return match fallback {
                    Some(accepted) => Ok(announced(*accepted, &mut report)),
                    None => Err(rejected.error),
                };
            };
            retried.push(retry.reason);
            let (reason, wait_ms) = (retry.reason, retry.wait_ms);
            report(AttemptEvent::Retrying {
                next: attempt + 1,
                reason,
                wait_ms,
            });
            let mut left_ms = wait_ms;
            while left_ms > 0 {
                let step_ms = left_ms.min(PROGRESS_EVERY_MS);
                race_deadline(self.timer.sleep(step_ms), self.cancel.cancelled())
                    .await
                    .ok_or(CompactionError::Aborted)?;
                left_ms -= step_ms;
                if left_ms > 0 {
                    report(AttemptEvent::Still);
                }
            }
            prompt = retry.prompt;
        }
    }

    /// `work`, with `report` told [`AttemptEvent::Still`] every [`PROGRESS_EVERY_MS`] until it
    /// ends.
    async fn beating<T>(
        &self,
        work: impl Future<Output = T>,
        report: &mut impl FnMut(AttemptEvent),
    ) -> T {
        let mut work = std::pin::pin!(work);
        loop {
            let beat = self.timer.sleep(PROGRESS_EVERY_MS);
            if let Some(done) = race_deadline(work.as_mut(), beat).await {
                return done;
            }
            report(AttemptEvent::Still);
        }
    }
}

/// How often (ms) the app hears that a call or a wait still lasts: a progress event at least
/// every 250 ms while a compaction works.
pub const PROGRESS_EVERY_MS: u32 = 200;

/// Tells `report` what the package did to the answer taken; `accepted` itself.
fn announced(accepted: Accepted, report: &mut impl FnMut(AttemptEvent)) -> Accepted {
    report(AttemptEvent::Accepted {
        required: accepted.coverage.required.len(),
        kept: accepted.coverage.kept.len(),
        unverified: accepted.unverified.len(),
        format: accepted.answer_format,
    });
    accepted
}
