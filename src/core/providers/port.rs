//! The LLM port: a provider turns a compaction request into summary text. It lives with the
//! providers, above the steps, because a request is made of the steps' values (the selection,
//! its digest, the ledger).

use crate::core::json::record::json_record;
use std::future::Future;

use crate::core::error::{ProviderError, ProviderFailure};
use crate::core::model::facts::Ledger;
use crate::core::model::settings::{CompactorSettings, DEFAULT_TEMPERATURE};
use crate::core::model::token_usage::TokenUsage;
use crate::core::ports::timer::{race_deadline, LocalBoxFuture, Timer};
use crate::core::steps::digest::Digest;
use crate::core::steps::selection::Selection;

/// The generation settings passed to a provider (`GenerationSettings` in TypeScript).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationSettings {
    /// Model id (providers without models report their own name).
    pub model: String,
    /// Sampling temperature (the app's `temperature` option, else 0.1).
    pub temperature: f64,
    /// Whether the app set `temperature` itself (then it wins over a model family's advice).
    pub temperature_set: bool,
    /// Output budget.
    pub max_output_tokens: u32,
    /// Time limit of the call in ms (the engine enforces it too).
    pub timeout_ms: u32,
}

// Written without `temperature_set` (the provider sees the temperature to use).
json_record! {
    write GenerationSettings {
        model: "model" req,
        temperature: "temperature" req,
        max_output_tokens: "maxOutputTokens" req,
        timeout_ms: "timeoutMs" req,
    }
}

impl GenerationSettings {
    /// The settings of a call to `model` under `settings`.
    pub fn of(settings: &CompactorSettings, model: String) -> Self {
        GenerationSettings {
            model,
            temperature: settings.temperature.unwrap_or(DEFAULT_TEMPERATURE),
            temperature_set: settings.temperature.is_some(),
            max_output_tokens: settings.max_output_tokens,
            timeout_ms: settings.timeout_ms,
        }
    }
}

/// What a provider is asked for: the prompt, and the selection it was built from (a local
/// provider summarises the entries directly).
pub struct SummaryRequest<'a> {
    /// The exact prompt.
    pub prompt: &'a str,
    /// The entries being compacted.
    pub selection: &'a Selection<'a>,
    /// What those entries say, read once per compaction.
    pub digest: &'a Digest,
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
    /// Whether the output limit cut the text (Gemini's `MAX_TOKENS`).
    pub cut: bool,
}

impl From<String> for Generation {
    fn from(text: String) -> Self {
        Self {
            text,
            usage: None,
            model: None,
            cut: false,
        }
    }
}

/// One attempt of `provider` at `request`, given up after `timeout_ms` (a time-out error) or
/// when `cancelled` completes (`None`). Dropping the call lets the provider abort its request.
pub async fn ask(
    provider: &dyn SummaryProvider,
    request: &SummaryRequest<'_>,
    timer: &dyn Timer,
    timeout_ms: u32,
    cancelled: impl Future<Output = ()>,
) -> Option<Result<Generation, ProviderFailure>> {
    let timed = race_deadline(provider.generate(request), timer.sleep(timeout_ms));
    let timeout = ProviderError::Timeout {
        after_ms: timeout_ms,
    };
    Some(
        race_deadline(timed, cancelled)
            .await?
            .unwrap_or(Err(timeout.into())),
    )
}

/// Turns a compaction request into summary text.
pub trait SummaryProvider {
    /// The model id reported in [`GenerationSettings`].
    fn model(&self) -> String;
    /// The most input tokens the model takes in one call, when known (a larger prompt is
    /// summarised in parts unless the app sets `maxPromptTokens`).
    fn input_limit(&self) -> Option<usize> {
        None
    }
    /// Whether every number and name of its summaries comes from the request's entries and
    /// ledger by construction (the offline summariser), so that nothing needs verifying.
    fn grounded(&self) -> bool {
        false
    }
    /// One attempt at a summary; a failure carries the tokens its answer still reported.
    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>>;
}

#[cfg(test)]
mod tests {
    use super::*;

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
