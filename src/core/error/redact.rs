//! Secrets out of every text the package shows: the configured API key, and anything shaped
//! like a Google API key (`AIza` and 35 more characters), which Google's own error bodies quote
//! ("Consumer 'api_key:AIza…' has been suspended", `DebugInfo` "Invalid API key: …").

use crate::core::order::text_search::TextSearch;
use std::borrow::Cow;

/// What a removed secret reads as.
pub(crate) const REDACTED: &str = "[redacted]";

/// Google API keys: `AIza` followed by 35 of `[A-Za-z0-9_-]`.
const GOOGLE_KEY_PREFIX: &str = "AIza";
const GOOGLE_KEY_LEN: usize = 39;

/// A secret shorter than this is not searched for (it would blank out ordinary words).
const MIN_SECRET_LEN: usize = 8;

fn key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// `text` with `secret` (when it is at least 8 characters) and every Google-API-key-shaped run
/// replaced by `[redacted]`; borrowed when there was nothing to replace.
pub fn redact<'a>(text: &'a str, secret: Option<&str>) -> Cow<'a, str> {
    let mut out: Cow<'a, str> = Cow::Borrowed(text);
    if let Some(secret) = secret.map(str::trim).filter(|s| s.len() >= MIN_SECRET_LEN) {
        if out.contains_text(secret) {
            out = Cow::Owned(out.replace_text(secret, REDACTED, usize::MAX));
        }
    }
    if !out.contains_text(GOOGLE_KEY_PREFIX) {
        return out;
    }
    let bytes = out.as_bytes();
    let mut cleaned = String::with_capacity(out.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = out[at..].find_text(GOOGLE_KEY_PREFIX) {
        let start = at + found;
        let run = bytes[start..].iter().take_while(|&&b| key_char(b)).count();
        let preceded = start > 0 && key_char(bytes[start - 1]);
        if run >= GOOGLE_KEY_LEN && !preceded {
            cleaned.push_str(&out[copied..start]);
            cleaned.push_str(REDACTED);
            copied = start + run;
        }
        at = start + run.max(GOOGLE_KEY_PREFIX.len());
    }
    if copied == 0 {
        return out;
    }
    cleaned.push_str(&out[copied..]);
    Cow::Owned(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AIzaSyD-1234567890abcdefghijklmnopqrstu";

    #[test]
    fn the_configured_key_and_google_shaped_keys_are_removed() {
        assert_eq!(KEY.len(), GOOGLE_KEY_LEN);
        let google = format!("Permission denied: Consumer 'api_key:{KEY}' has been suspended.");
        assert_eq!(
            redact(&google, None),
            "Permission denied: Consumer 'api_key:[redacted]' has been suspended."
        );
        assert_eq!(
            redact(
                "Invalid API key: my-own-test-key-42",
                Some("my-own-test-key-42")
            ),
            "Invalid API key: [redacted]"
        );
        let twice = format!("{KEY} and {KEY}");
        assert_eq!(redact(&twice, None), "[redacted] and [redacted]");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        assert!(matches!(redact("AIza is a prefix", None), Cow::Borrowed(_)));
        assert!(matches!(
            redact("a short key", Some("key")),
            Cow::Borrowed(_)
        ));
        let word = format!("xAIza{}", "b".repeat(40));
        assert_eq!(redact(&word, None), word);
    }
}
