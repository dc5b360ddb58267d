//! The LLM port: a provider turns a compaction request into summary text. Also the timer port
//! and the two small future combinators the engine needs (no async runtime in the core).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::Serialize;

pub use crate::core::error::ProviderError;
use crate::core::ledger::Ledger;
pub use crate::core::outcome::TokenUsage;
use crate::core::selection::Selection;

/// A boxed future that need not be `Send` (the browser is single-threaded).
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// The generation settings passed to a provider (`GenerationSettings` in TypeScript).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationSettings {
    /// Model id (providers without models report their own name).
    pub model: String,
    /// Sampling temperature (the app's `temperature` option, else 0.1).
    pub temperature: f64,
    /// Whether the app set `temperature` itself (then it wins over a model family's advice).
    #[serde(skip)]
    pub temperature_set: bool,
    /// Output budget.
    pub max_output_tokens: u32,
    /// Time limit of the call in ms (the engine enforces it too).
    pub timeout_ms: u32,
}

/// What a provider is asked for: the prompt, and the selection it was built from (a local
/// provider summarises the entries directly).
pub struct SummaryRequest<'a> {
    /// The exact prompt.
    pub prompt: &'a str,
    /// The entries being compacted.
    pub selection: &'a Selection<'a>,
    /// The facts the summary must keep (the prompt lists them too).
    pub ledger: &'a Ledger,
    /// Generation settings.
    pub settings: &'a GenerationSettings,
}

/// One answer of a provider: the text, and the tokens it cost when the provider says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// The summary text.
    pub text: String,
    /// Reported token counts, if any.
    pub usage: Option<TokenUsage>,
    /// The model that answered, when the provider says (Gemini's `modelVersion`).
    pub model: Option<String>,
}

impl From<String> for Generation {
    fn from(text: String) -> Self {
        Self {
            text,
            usage: None,
            model: None,
        }
    }
}

/// Turns a compaction request into summary text.
pub trait SummaryProvider {
    /// The model id reported in [`GenerationSettings`].
    fn model(&self) -> String;
    /// One attempt at a summary.
    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderError>>;
}

/// Waiting without blocking (`setTimeout` in the browser).
pub trait Timer {
    /// A future that completes after `ms` milliseconds.
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()>;
}

/// Runs `work` until it completes or `deadline` does; `None` when the deadline came first.
pub async fn race_deadline<T>(
    work: impl Future<Output = T>,
    deadline: impl Future<Output = ()>,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut deadline = std::pin::pin!(deadline);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

#[cfg(any(test, feature = "testing"))]
/// Drives a future whose every step is ready at once (scripted providers, instant timers) to
/// completion; `None` if it would wait for something. For native tests and tools.
pub fn run_ready<T>(future: impl Future<Output = T>) -> Option<T> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for _ in 0..10_000 {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_wins_over_a_future_that_never_completes() {
        let result = run_ready(race_deadline(std::future::pending::<u8>(), async {}));
        assert_eq!(result, Some(None));
        let result = run_ready(race_deadline(async { 7 }, std::future::pending::<()>()));
        assert_eq!(result, Some(Some(7)));
    }

    #[test]
    fn retry_policy_follows_the_status() {
        let http = |status| ProviderError::Http {
            status,
            message: String::new(),
            retry_after_ms: None,
            lasting: false,
        };
        assert!(http(429).is_retryable() && http(503).is_retryable() && http(408).is_retryable());
        assert!(
            !http(400).is_retryable() && !http(403).is_retryable() && !http(404).is_retryable()
        );
        assert!(!ProviderError::Blocked("SAFETY".into()).is_retryable());
        assert!(ProviderError::Timeout { after_ms: 5 }.is_retryable());
    }
}
