//! What one answer of the provider means for the compaction: the summary, another attempt
//! (why, after how long, with which prompt), or the end.

use crate::core::error::{CompactionError, ProviderError};
use crate::core::model::reasons::RetryReason;
use crate::core::model::settings::MAX_RETRY_WAIT_MS;
use crate::core::steps::answer_text::read_answer;
use crate::core::steps::check::{Accepted, Verdict};
use crate::core::steps::junk::without_junk;
use crate::core::steps::prompt::retry_prompt;
use crate::core::steps::salvage::salvaged;

/// One answer's text, and whether the model's output limit cut it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The text.
    pub text: String,
    /// Whether it was cut at the output limit (Gemini's `MAX_TOKENS`).
    pub cut: bool,
}

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

/// What the retry of an answer cut at its output limit adds.
const CUT_ERROR: &str =
    "The answer was cut off at the output limit: write shorter points, and every section";

/// Judges `answer` (the text, or why there is none) to `prompt`: a text is kept as far as it
/// is whole when the output limit cut it, made canonical, rid of its junk (a text of junk
/// alone is asked for again, saying why) and `check`ed; a failure is retried when another
/// attempt can pass (after the wait the API asked for, at most a minute, else
/// `retry_delay_ms`). `Ok` holds the summary to swap in.
pub fn judge(
    answer: Result<Answered, ProviderError>,
    prompt: &str,
    retry_delay_ms: u32,
    check: impl FnOnce(&str) -> Verdict,
) -> Result<Accepted, Rejected> {
    let err = match answer {
        Ok(answered) => {
            let cut = answered.cut;
            let whole = match cut {
                true => salvaged(&answered.text),
                false => answered.text,
            };
            let (summary, answer_format) = read_answer(&whole);
            let cleaned = without_junk(&summary, prompt);
            // An answer of junk alone is judged as no answer, and the retry says why.
            let emptied = cleaned.emptied();
            let kept = if emptied.is_some() { "" } else { &cleaned.text };
            // What the check took, with what it cannot know: the answer's form and its cut.
            let read = |accepted| Accepted {
                answer_format,
                salvaged: cut,
                ..accepted
            };
            let (reason, mut rejected, fallback) = match check(kept) {
                Verdict::Accept(accepted) => return Ok(read(accepted)),
                Verdict::AskAgain {
                    reason,
                    rejected,
                    fallback,
                } => (reason, rejected, fallback),
            };
            rejected.errors.extend(emptied.map(str::to_owned));
            if cut {
                rejected.errors.push(CUT_ERROR.to_owned());
            }
            return Err(Rejected {
                error: CompactionError::InvalidSummary(rejected.errors.clone()),
                retry: Some(Retry {
                    reason,
                    wait_ms: retry_delay_ms,
                    prompt: retry_prompt(prompt, &rejected),
                }),
                fallback: fallback.map(|accepted| Box::new(read(accepted))),
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
