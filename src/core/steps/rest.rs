//! Sparing a provider that is down: after a compaction whose every call failed (an HTTP error,
//! a time-out, no network, a custom provider that threw), the loop's compactions do not ask it
//! again for a while: they go to the fallback rung at once, with no call and no retry wait.
//! The rest lasts a minute, doubles with each failure in a row up to 16 minutes, and is never
//! shorter than the wait the provider asked for; an answer ends it. The user's compactions
//! always ask.

use crate::core::error::{CompactionError, ErrorCode, ProviderError};

/// The first rest, in ms.
const FIRST_REST_MS: f64 = 60_000.0;

/// Failures in a row after which the rest stops doubling (16 minutes).
const LONGEST_DOUBLING: u32 = 4;

/// How long the provider rests, and the failure that sent it there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRest {
    failures_in_a_row: u32,
    until_ms: f64,
    failure: Option<ProviderError>,
}

impl ModelRest {
    /// The rest after a compaction whose model was asked at `now_ms` and ended in `outcome`
    /// (the failure of its last call, or `None` for an answer); a cancel changes nothing.
    pub fn after(self, outcome: Option<&CompactionError>, now_ms: f64) -> Self {
        let cancelled = matches!(outcome.map(CompactionError::code), Some(ErrorCode::Aborted));
        if cancelled {
            return self;
        }
        let Some(failure) = outcome.and_then(CompactionError::provider).filter(is_down) else {
            return ModelRest::default();
        };
        let failures_in_a_row = self.failures_in_a_row.saturating_add(1);
        let doubling = failures_in_a_row.min(LONGEST_DOUBLING + 1) - 1;
        let mut rest_ms = FIRST_REST_MS * f64::from(1u32 << doubling);
        if let ProviderError::Http {
            retry_after_ms: Some(asked),
            ..
        } = failure
        {
            rest_ms = rest_ms.max(f64::from(*asked));
        }
        ModelRest {
            failures_in_a_row,
            until_ms: now_ms + rest_ms,
            failure: Some(failure.clone()),
        }
    }

    /// The failure the provider rests after and the seconds left, while it rests at `now_ms`.
    pub fn resting(&self, now_ms: f64) -> Option<(&ProviderError, u64)> {
        let left_ms = self.until_ms - now_ms;
        let failure = self.failure.as_ref().filter(|_| left_ms > 0.0)?;
        Some((failure, (left_ms / 1_000.0).ceil() as u64))
    }
}

/// Whether `failure` says the provider is down, not that its answer was wrong.
fn is_down(failure: &&ProviderError) -> bool {
    !matches!(
        failure,
        ProviderError::Blocked(_) | ProviderError::Incomplete(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(retry_after_ms: Option<u32>) -> CompactionError {
        CompactionError::Provider(ProviderError::Http {
            status: 503,
            message: "overloaded".into(),
            retry_after_ms,
            lasting: false,
        })
    }

    #[test]
    fn a_rest_doubles_with_each_failure_in_a_row_and_an_answer_ends_it() {
        let mut rest = ModelRest::default();
        assert!(rest.resting(0.0).is_none());
        let mut lasted = Vec::new();
        for _ in 0..7 {
            rest = rest.after(Some(&http(None)), 0.0);
            lasted.push(rest.resting(0.0).map(|(_, left)| left));
        }
        let minutes = [1, 2, 4, 8, 16, 16, 16].map(|m| Some(m * 60));
        assert_eq!(lasted, minutes);
        assert!(rest.resting(16.0 * 60_000.0).is_none(), "over at its end");
        assert_eq!(rest.after(None, 0.0), ModelRest::default());
    }

    #[test]
    fn the_wait_the_provider_asked_for_is_kept_and_a_wrong_answer_is_no_rest() {
        let rest = ModelRest::default().after(Some(&http(Some(300_000))), 0.0);
        assert_eq!(rest.resting(0.0).map(|(_, left)| left), Some(300));
        for cancelled in [
            CompactionError::Provider(ProviderError::Aborted),
            CompactionError::Aborted,
        ] {
            assert_eq!(rest.clone().after(Some(&cancelled), 0.0), rest);
        }
        for answered in [
            CompactionError::InvalidSummary(vec!["no sections".into()]),
            CompactionError::Provider(ProviderError::Incomplete("MAX_TOKENS".into())),
        ] {
            let rest = rest.clone().after(Some(&answered), 0.0);
            assert!(rest.resting(0.0).is_none(), "{answered:?}");
        }
        let timeout = CompactionError::Provider(ProviderError::Timeout { after_ms: 1 });
        assert!(ModelRest::default()
            .after(Some(&timeout), 0.0)
            .resting(0.0)
            .is_some());
    }
}
