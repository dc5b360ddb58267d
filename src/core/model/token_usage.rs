//! Tokens a provider reports it spent.

use crate::core::json::read::{FromJson, Object, ReadError};
use crate::core::json::write::{ObjectOut, ToJson};

/// Token counts a provider reports (Gemini's `usageMetadata`), summed over attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Thinking tokens (they count against `maxOutputTokens`).
    pub thinking_tokens: u64,
    /// Prompt tokens served from Gemini's context cache (part of `prompt_tokens`).
    pub cached_tokens: u64,
}

impl ToJson for TokenUsage {
    fn write_json(&self, out: &mut String) {
        ObjectOut::new(out)
            .field("promptTokens", &self.prompt_tokens)
            .field("outputTokens", &self.output_tokens)
            .field("thinkingTokens", &self.thinking_tokens)
            .field("cachedTokens", &self.cached_tokens);
    }
}

impl FromJson for TokenUsage {
    fn from_json(json: &str) -> Result<Self, ReadError> {
        let usage = Object::read(json)?;
        Ok(TokenUsage {
            prompt_tokens: usage.req("promptTokens")?,
            output_tokens: usage.req("outputTokens")?,
            thinking_tokens: usage.req("thinkingTokens")?,
            cached_tokens: usage.or_default("cachedTokens")?,
        })
    }
}

impl TokenUsage {
    /// `total` with `usage` added (a total of none stays none until an answer reports some).
    pub fn add_to(total: &mut Option<TokenUsage>, usage: Option<TokenUsage>) {
        if let Some(usage) = usage {
            *total.get_or_insert_with(TokenUsage::default) += usage;
        }
    }
}

impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.thinking_tokens = self.thinking_tokens.saturating_add(other.thinking_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
    }
}
