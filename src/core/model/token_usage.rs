//! Tokens a provider reports it spent.

use crate::core::json::record::json_record;

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

json_record! {
    read write TokenUsage {
        prompt_tokens: "promptTokens" req,
        output_tokens: "outputTokens" req,
        thinking_tokens: "thinkingTokens" req,
        cached_tokens: "cachedTokens" default,
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
