//! The LLM port: a provider turns a compaction request into summary text. Also the timer port
//! and the two small future combinators the engine needs (no async runtime in the core).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use serde::Serialize;

use super::error::ErrorCode;
use super::selection::Selection;

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
    /// Generation settings.
    pub settings: &'a GenerationSettings,
}

/// Token counts a provider reports (Gemini's `usageMetadata`), summed over attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Thinking tokens (they count against `maxOutputTokens`).
    pub thinking_tokens: u64,
    /// Prompt tokens served from Gemini's context cache (part of `prompt_tokens`).
    #[serde(default)]
    pub cached_tokens: u64,
}

impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.thinking_tokens = self.thinking_tokens.saturating_add(other.thinking_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
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

/// Why a provider call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderError {
    /// The API answered with an HTTP error.
    Http {
        /// HTTP status.
        status: u16,
        /// The API's message (never containing the key).
        message: String,
        /// How long the API asked to wait before retrying, in ms.
        retry_after_ms: Option<u32>,
        /// The cause lasts beyond any retry: a per-day quota used up, a quota of 0.
        lasting: bool,
    },
    /// No answer within the time limit.
    Timeout {
        /// The limit that passed, in ms.
        after_ms: u32,
    },
    /// The request did not reach the API.
    Network(String),
    /// The prompt or the answer was blocked (safety, recitation).
    Blocked(String),
    /// The answer was cut off or empty; treated like an invalid summary.
    Incomplete(String),
    /// A custom provider threw or returned something other than text.
    Failed(String),
    /// A failed answer that still reported (and was billed for) tokens.
    WithUsage {
        /// The failure.
        error: Box<ProviderError>,
        /// The tokens the answer reported.
        usage: TokenUsage,
    },
    /// The caller cancelled the call.
    Aborted,
}

impl ProviderError {
    /// The code reported to JavaScript.
    pub fn code(&self) -> ErrorCode {
        match self {
            ProviderError::Http { .. } => ErrorCode::LlmHttp,
            ProviderError::Timeout { .. } => ErrorCode::LlmTimeout,
            ProviderError::Network(_) | ProviderError::Failed(_) => ErrorCode::LlmNetwork,
            ProviderError::Blocked(_) => ErrorCode::LlmBlocked,
            ProviderError::Incomplete(_) => ErrorCode::InvalidSummary,
            ProviderError::WithUsage { error, .. } => error.code(),
            ProviderError::Aborted => ErrorCode::Aborted,
        }
    }

    /// The failure and the tokens its answer reported, if any.
    pub fn split_usage(self) -> (ProviderError, Option<TokenUsage>) {
        match self {
            ProviderError::WithUsage { error, usage } => (*error, Some(usage)),
            other => (other, None),
        }
    }

    /// This failure, carrying the tokens its answer reported (when it reported any).
    pub fn with_usage(self, usage: Option<TokenUsage>) -> Self {
        match usage {
            Some(usage) => ProviderError::WithUsage {
                error: Box::new(self),
                usage,
            },
            None => self,
        }
    }

    /// The HTTP status, when the API answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProviderError::Http { status, .. } => Some(*status),
            ProviderError::WithUsage { error, .. } => error.status(),
            _ => None,
        }
    }

    /// How long the API asked to wait, in ms.
    pub fn retry_after_ms(&self) -> Option<u32> {
        match self {
            ProviderError::Http { retry_after_ms, .. } => *retry_after_ms,
            ProviderError::WithUsage { error, .. } => error.retry_after_ms(),
            _ => None,
        }
    }

    /// Why a retry follows this failure, as the retry event names it: `http_<status>`,
    /// `timeout`, `network`, `invalid_summary` (an incomplete answer) or `provider`.
    pub fn retry_reason(&self) -> String {
        match self {
            ProviderError::Http { status, .. } => format!("http_{status}"),
            ProviderError::Timeout { .. } => "timeout".into(),
            ProviderError::Network(_) => "network".into(),
            ProviderError::Incomplete(_) => "invalid_summary".into(),
            ProviderError::WithUsage { error, .. } => error.retry_reason(),
            ProviderError::Blocked(_) | ProviderError::Failed(_) | ProviderError::Aborted => {
                "provider".into()
            }
        }
    }

    /// Whether one more attempt can help: 408, 429 and 5xx, time-outs, network failures,
    /// incomplete answers and custom-provider failures; never 400/403/404 or a block.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http {
                status, lasting, ..
            } => !lasting && matches!(status, 408 | 429 | 500 | 502 | 503 | 504),
            ProviderError::Blocked(_) | ProviderError::Aborted => false,
            ProviderError::WithUsage { error, .. } => error.is_retryable(),
            _ => true,
        }
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::Http {
                status, message, ..
            } => write!(f, "the model's API answered HTTP {status}: {message}"),
            ProviderError::Timeout { after_ms } => {
                write!(f, "the model did not answer within {after_ms} ms")
            }
            ProviderError::Network(reason) => {
                write!(f, "the model's API could not be reached: {reason}")
            }
            ProviderError::Blocked(reason) => write!(f, "the model blocked the request: {reason}"),
            ProviderError::Incomplete(reason) => {
                write!(f, "the model's answer was incomplete: {reason}")
            }
            ProviderError::Failed(reason) => write!(f, "the summary provider failed: {reason}"),
            ProviderError::WithUsage { error, .. } => error.fmt(f),
            ProviderError::Aborted => write!(f, "the compaction was cancelled"),
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
