//! What one answer of the provider means for the compaction: the summary, another attempt
//! (why, after how long, with which prompt), or the end.

use crate::core::error::{CompactionError, ProviderError};
use crate::core::model::reasons::RetryReason;
use crate::core::model::settings::MAX_RETRY_WAIT_MS;
use crate::core::steps::answer_text::read_answer;
use crate::core::steps::check::{Accepted, Verdict};
use crate::core::steps::prompt::retry_prompt;

/// Why an answer was not taken, and whether another attempt can help.
#[derive(Debug)]
pub struct Rejected {
    /// The error the compaction ends with when no attempt follows.
    pub error: CompactionError,
    /// The attempt that can follow, if one can help.
    pub retry: Option<Retry>,
    /// The summary to take instead of failing when no attempt follows (a mended answer).
    pub fallback: Option<Box<Accepted>>,
}

/// Another attempt: why, after how long, with which prompt.
#[derive(Debug)]
pub struct Retry {
    /// Why another attempt follows.
    pub reason: RetryReason,
    /// How long to wait before it, in ms.
    pub wait_ms: u32,
    /// The prompt to send (naming what was wrong with a rejected summary).
    pub prompt: String,
}

/// Judges `answer` (the text, or why there is none) to `prompt`: a text is made canonical and
/// `check`ed; a failure is retried when another attempt can pass (after the wait the API asked
/// for, at most a minute, else `retry_delay_ms`). `Ok` holds the summary to swap in.
pub fn judge(
    answer: Result<String, ProviderError>,
    prompt: &str,
    retry_delay_ms: u32,
    check: impl FnOnce(&str) -> Verdict,
) -> Result<Accepted, Rejected> {
    let err = match answer {
        Ok(text) => {
            let (summary, answer_format) = read_answer(&text);
            let (reason, rejected, fallback) = match check(&summary) {
                Verdict::Accept(accepted) => {
                    return Ok(Accepted {
                        answer_format,
                        ..accepted
                    })
                }
                Verdict::AskAgain {
                    reason,
                    rejected,
                    fallback,
                } => (reason, rejected, fallback),
            };
            return Err(Rejected {
                error: CompactionError::InvalidSummary(rejected.errors.clone()),
                retry: Some(Retry {
                    reason,
                    wait_ms: retry_delay_ms,
                    prompt: retry_prompt(prompt, &rejected),
                }),
                fallback: fallback.map(|accepted| {
                    Box::new(Accepted {
                        answer_format,
                        ..accepted
                    })
                }),
            });
        }
        Err(err) => err,
    };
    let retry = err.is_retryable().then(|| Retry {
        reason: err.retry_reason(),
        wait_ms: err
            .retry_after_ms()
            .map_or(retry_delay_ms, |ms| ms.min(MAX_RETRY_WAIT_MS)),
        prompt: prompt.to_owned(),
    });
    let error = match err {
        ProviderError::Incomplete(reason) => CompactionError::InvalidSummary(vec![reason]),
        other => CompactionError::Provider(other),
    };
    Err(Rejected {
        error,
        retry,
        fallback: None,
    })
}
