//! Typed errors of the core and the stable codes they carry to JavaScript, and the redaction
//! of secrets from every message that leaves ([`redact`]).

pub mod redact;

use crate::core::json::record::json_names;
use crate::core::order::join::Joined;
use std::fmt;

use crate::core::model::clearing::ClearedBody;
use crate::core::model::reasons::{BusyReason, Refusal, RetryReason};
use crate::core::model::token_usage::TokenUsage;

/// The stable, machine-readable code of an error; the `code` property of the JS `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The rules do not allow a compaction now (too few iterations, usage too low, …).
    NotAllowed,
    /// Another compaction or rollback is running.
    Busy,
    /// The model's API answered with an HTTP error.
    LlmHttp,
    /// The provider did not answer within `timeoutMs`.
    LlmTimeout,
    /// The provider could not be reached.
    LlmNetwork,
    /// The provider refused the prompt or stopped for safety.
    LlmBlocked,
    /// The summary failed validation on every attempt.
    InvalidSummary,
    /// A key of the package holds text that is not the JSON it should be.
    StorageCorrupt,
    /// localStorage is full; the previous value of the key is intact.
    StorageQuota,
    /// localStorage cannot be used at all (blocked cookies, a worker, an unknown failure).
    StorageUnavailable,
    /// An argument passed by the caller does not have the expected shape.
    InvalidInput,
    /// The caller cancelled the compaction (`signal` or `abort()`).
    Aborted,
    /// The no-bundler entry was used before `init()` (raised by the JS glue, not by Rust).
    NotInitialized,
    /// The archive asked for (by key, or holding a compacted iteration a live summary names)
    /// is no longer stored: deleted, expired, or evicted by the browser.
    ArchiveMissing,
}

json_names! {
    all ErrorCode {
        NotAllowed = "not_allowed",
        Busy = "busy",
        LlmHttp = "llm_http",
        LlmTimeout = "llm_timeout",
        LlmNetwork = "llm_network",
        LlmBlocked = "llm_blocked",
        InvalidSummary = "invalid_summary",
        StorageCorrupt = "storage_corrupt",
        StorageQuota = "storage_quota",
        StorageUnavailable = "storage_unavailable",
        InvalidInput = "invalid_input",
        Aborted = "aborted",
        NotInitialized = "not_initialized",
        ArchiveMissing = "archive_missing",
    }
}

/// A failure to read or write one key of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The key holds invalid JSON or JSON of the wrong shape. It was left untouched.
    Corrupt {
        /// The full storage key.
        key: String,
        /// What is wrong with it, as the JSON parser saw it.
        reason: String,
    },
    /// Writing the key would exceed the storage quota. The previous value is intact.
    Quota {
        /// The full storage key.
        key: String,
        /// Size of the key and value that did not fit, in UTF-16 code units (what the quota
        /// counts).
        units_needed: usize,
        /// Free UTF-16 code units in the store, when known.
        free_units: Option<usize>,
    },
    /// The storage itself failed or cannot be reached.
    Unavailable {
        /// What the platform reported.
        reason: String,
    },
    /// The archive database (IndexedDB) refused a transaction or could not be opened; none of
    /// the transaction's writes is stored.
    ArchiveDatabase {
        /// What was being done and what the browser reported.
        reason: String,
        /// Whether the browser's quota was the reason.
        quota: bool,
    },
}

impl StorageError {
    /// The code reported to JavaScript.
    pub fn code(&self) -> ErrorCode {
        match self {
            StorageError::Corrupt { .. } => ErrorCode::StorageCorrupt,
            StorageError::Quota { .. } => ErrorCode::StorageQuota,
            StorageError::Unavailable { .. } => ErrorCode::StorageUnavailable,
            StorageError::ArchiveDatabase { quota: true, .. } => ErrorCode::StorageQuota,
            StorageError::ArchiveDatabase { quota: false, .. } => ErrorCode::StorageUnavailable,
        }
    }

    /// The storage key concerned, when there is one.
    pub fn key(&self) -> Option<&str> {
        match self {
            StorageError::Corrupt { key, .. } | StorageError::Quota { key, .. } => Some(key),
            StorageError::Unavailable { .. } | StorageError::ArchiveDatabase { .. } => None,
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Corrupt { key, reason } => write!(
                f,
                "the stored key \"{key}\" (localStorage, or an archive in IndexedDB) does not hold \
                 valid data ({reason}); it was left untouched"
            ),
            StorageError::Quota {
                key,
                units_needed,
                free_units,
            } => {
                write!(
                    f,
                    "localStorage is full: writing \"{key}\" needs {} bytes",
                    units_needed * 2
                )?;
                if let Some(free) = free_units {
                    write!(f, " and only {} bytes are free", free * 2)?;
                }
                write!(
                    f,
                    "; nothing was changed. Make room by removing data of this site from \
                     localStorage (archives count only with archiveStore \"localStorage\": \
                     deleteArchive)"
                )
            }
            StorageError::Unavailable { reason } => {
                write!(f, "localStorage is not available: {reason}")
            }
            StorageError::ArchiveDatabase { reason, .. } => write!(
                f,
                "the archive database (IndexedDB) failed: {reason}; nothing was changed"
            ),
        }
    }
}

impl std::error::Error for StorageError {}

/// Why a compaction or rollback stopped. Whatever the variant, the logs are as before, but
/// for [`CompactionError::AfterClearing`], whose clearing stands.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactionError {
    /// The rules (or the archive asked for) do not allow it.
    NotAllowed(Refusal),
    /// Another compaction or rollback is running, or the logs changed under this one.
    Busy(BusyReason),
    /// The provider failed on the last attempt.
    Provider(ProviderError),
    /// Every summary was invalid; the errors of the last one.
    InvalidSummary(Vec<String>),
    /// Every summary was invalid, and the retry brought back the very same answer: the
    /// provider answers this prompt deterministically, so asking again later would not help.
    SameInvalidSummary(Vec<String>),
    /// Reading or writing storage failed.
    Storage(StorageError),
    /// The caller cancelled the compaction before its archive was written.
    Aborted,
    /// The archive under `key` is no longer stored (deleted, expired, or evicted by the
    /// browser); the summary that names it stays.
    ArchiveMissing {
        /// The archive's storage key.
        key: String,
    },
    /// The summary rung failed (or was cancelled) after the clearing rung of the same
    /// compaction had written: the clearing stands, its archive listed and its placeholders in
    /// the logs; the error is the summary's.
    AfterClearing(Box<CompactionError>, ClearingStood),
}

/// What the clearing rung of a compaction had written when a later rung of it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClearingStood {
    /// The clearing's archive, which `rollback` undoes.
    pub archive_key: String,
    /// The bodies it moved there.
    pub cleared: Vec<ClearedBody>,
}

impl CompactionError {
    /// The error itself: the summary's failure of an [`CompactionError::AfterClearing`].
    pub fn cause(&self) -> &CompactionError {
        match self {
            CompactionError::AfterClearing(error, _) => error.cause(),
            other => other,
        }
    }

    /// The clearing that stands, when a later rung of the same compaction failed.
    pub fn clearing_stood(&self) -> Option<&ClearingStood> {
        match self {
            CompactionError::AfterClearing(_, stood) => Some(stood),
            _ => None,
        }
    }

    /// The code reported to JavaScript.
    pub fn code(&self) -> ErrorCode {
        match self.cause() {
            CompactionError::NotAllowed(_) => ErrorCode::NotAllowed,
            CompactionError::Busy(_) => ErrorCode::Busy,
            CompactionError::Provider(err) => err.code(),
            CompactionError::InvalidSummary(_) | CompactionError::SameInvalidSummary(_) => {
                ErrorCode::InvalidSummary
            }
            CompactionError::Storage(err) => err.code(),
            CompactionError::Aborted => ErrorCode::Aborted,
            CompactionError::ArchiveMissing { .. } => ErrorCode::ArchiveMissing,
            CompactionError::AfterClearing(..) => ErrorCode::Aborted,
        }
    }

    /// The storage key concerned, for storage errors and missing archives.
    pub fn key(&self) -> Option<&str> {
        match self.cause() {
            CompactionError::Storage(err) => err.key(),
            CompactionError::ArchiveMissing { key } => Some(key),
            _ => None,
        }
    }

    /// Whether trying again later can succeed, where that is known.
    pub fn retryable(&self) -> Option<bool> {
        match self.cause() {
            CompactionError::Provider(err) => Some(err.is_retryable()),
            CompactionError::InvalidSummary(_) | CompactionError::Busy(_) => Some(true),
            CompactionError::NotAllowed(_)
            | CompactionError::SameInvalidSummary(_)
            | CompactionError::ArchiveMissing { .. } => Some(false),
            CompactionError::Storage(_)
            | CompactionError::Aborted
            | CompactionError::AfterClearing(..) => None,
        }
    }

    /// The provider failure behind this error, if it is one.
    pub fn provider(&self) -> Option<&ProviderError> {
        match self.cause() {
            CompactionError::Provider(err) => Some(err),
            _ => None,
        }
    }
}

impl fmt::Display for CompactionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompactionError::NotAllowed(reason) => write!(f, "{reason}"),
            CompactionError::Busy(reason) => write!(f, "{reason}"),
            CompactionError::Provider(err) => write!(f, "{err}"),
            CompactionError::InvalidSummary(errors) => write!(
                f,
                "the model's summary was rejected on every attempt: {}",
                errors.joined("; ")
            ),
            CompactionError::SameInvalidSummary(errors) => write!(
                f,
                "the model's summary was rejected, and asked again it gave the same answer, so \
                 trying again will not help: {}",
                errors.joined("; ")
            ),
            CompactionError::Storage(err) => write!(f, "{err}"),
            CompactionError::Aborted => write!(
                f,
                "The compaction was cancelled before anything was written; the logs are unchanged."
            ),
            CompactionError::ArchiveMissing { key } => write!(
                f,
                "The archive \"{key}\" is no longer stored (deleted, expired, or evicted by the \
                 browser): its originals cannot be read back; the summary that replaced them stays."
            ),
            CompactionError::AfterClearing(error, stood) => {
                match error.cause() {
                    CompactionError::Aborted => write!(
                        f,
                        "The compaction was cancelled after its clearing, before a summary"
                    )?,
                    cause => write!(f, "{cause}")?,
                }
                let key = &stood.archive_key;
                write!(
                    f,
                    " (the clearing that ran first stands: {} bodies moved to the archive \
                     \"{key}\"; rollback(\"{key}\") puts them back).",
                    stood.cleared.len()
                )
            }
        }
    }
}

impl std::error::Error for CompactionError {}

impl From<StorageError> for CompactionError {
    fn from(err: StorageError) -> Self {
        CompactionError::Storage(err)
    }
}

/// A failed provider call: why, and beside it the tokens its answer still reported (and was
/// billed for), if it reported any.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderFailure {
    /// Why it failed.
    pub error: ProviderError,
    /// The tokens the answer reported.
    pub usage: Option<TokenUsage>,
}

impl ProviderFailure {
    /// The failure and the tokens its answer reported.
    pub fn split_usage(self) -> (ProviderError, Option<TokenUsage>) {
        (self.error, self.usage)
    }
}

impl From<ProviderError> for ProviderFailure {
    fn from(error: ProviderError) -> Self {
        ProviderFailure { error, usage: None }
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
    /// A custom provider threw or its promise rejected.
    Failed(String),
    /// A custom provider rejected with an error whose `retryable` is `false`: no retry.
    Refused(String),
    /// A custom provider's `generate()` resolved to something other than text (what it was):
    /// a mistake in the app's code that no retry mends.
    NotText(String),
    /// The caller cancelled the call.
    Aborted,
}

impl ProviderError {
    /// The code reported to JavaScript.
    pub fn code(&self) -> ErrorCode {
        match self {
            ProviderError::Http { .. } => ErrorCode::LlmHttp,
            ProviderError::Timeout { .. } => ErrorCode::LlmTimeout,
            ProviderError::Network(_) | ProviderError::Failed(_) | ProviderError::Refused(_) => {
                ErrorCode::LlmNetwork
            }
            ProviderError::NotText(_) => ErrorCode::InvalidInput,
            ProviderError::Blocked(_) => ErrorCode::LlmBlocked,
            ProviderError::Incomplete(_) => ErrorCode::InvalidSummary,
            ProviderError::Aborted => ErrorCode::Aborted,
        }
    }

    /// This failure, carrying the tokens its answer reported (when it reported any).
    pub fn with_usage(self, usage: Option<TokenUsage>) -> ProviderFailure {
        ProviderFailure { error: self, usage }
    }

    /// The HTTP status, when the API answered with an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProviderError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// How long the API asked to wait, in ms.
    pub fn retry_after_ms(&self) -> Option<u32> {
        match self {
            ProviderError::Http { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }

    /// Why a retry follows this failure, as the retry event names it: `http_<status>`,
    /// `timeout`, `network`, `invalid_summary` (an incomplete answer) or `provider`.
    pub(crate) fn retry_reason(&self) -> RetryReason {
        match self {
            ProviderError::Http { status, .. } => RetryReason::Http(*status),
            ProviderError::Timeout { .. } => RetryReason::Timeout,
            ProviderError::Network(_) => RetryReason::Network,
            ProviderError::Incomplete(_) => RetryReason::InvalidSummary,
            ProviderError::Blocked(_)
            | ProviderError::Failed(_)
            | ProviderError::Refused(_)
            | ProviderError::NotText(_)
            | ProviderError::Aborted => RetryReason::Provider,
        }
    }

    /// Whether one more attempt can help: 408, 429 and 5xx, time-outs, network failures,
    /// incomplete answers and custom-provider failures; never 400/403/404, a block, or a
    /// failure the provider called lasting.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http {
                status, lasting, ..
            } => !lasting && matches!(status, 408 | 429 | 500 | 502 | 503 | 504),
            ProviderError::Blocked(_)
            | ProviderError::Refused(_)
            | ProviderError::NotText(_)
            | ProviderError::Aborted => false,
            _ => true,
        }
    }
}

/// What an error a custom provider threw says of itself, in the properties an app may set on
/// it (`status`, `retryable`, `retryAfterMs`), as read from JavaScript.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThrownSays {
    /// `status`: the HTTP status the app's own call got.
    pub status: Option<f64>,
    /// `retryable`: whether another attempt can help.
    pub retryable: Option<bool>,
    /// `retryAfterMs`: how long to wait before another attempt.
    pub retry_after_ms: Option<f64>,
}

impl ProviderError {
    /// The failure of a custom provider whose error reads `message`, as that error says of
    /// itself: with an HTTP `status` (a whole number from 100 to 599) an HTTP error, retried as
    /// the API's own are (408, 429, 5xx); with `retryable: false`, never retried.
    pub fn thrown(message: String, says: ThrownSays) -> Self {
        let lasting = says.retryable == Some(false);
        let status = says
            .status
            .filter(|s| s.fract() == 0.0 && (100.0..600.0).contains(s));
        let retry_after_ms = says
            .retry_after_ms
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| ms.min(f64::from(u32::MAX)) as u32);
        match status {
            Some(status) => ProviderError::Http {
                status: status as u16,
                message,
                retry_after_ms,
                lasting,
            },
            None if lasting => ProviderError::Refused(message),
            None => ProviderError::Failed(message),
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
                write!(
                    f,
                    "the model did not answer within timeoutMs ({after_ms} ms)"
                )
            }
            ProviderError::Network(reason) => {
                write!(f, "the model's API could not be reached: {reason}")
            }
            ProviderError::Blocked(reason) => write!(f, "the model blocked the request: {reason}"),
            ProviderError::Incomplete(reason) => {
                write!(f, "the model's answer was incomplete: {reason}")
            }
            ProviderError::Failed(reason) => write!(f, "the summary provider failed: {reason}"),
            ProviderError::Refused(reason) => write!(
                f,
                "the summary provider failed and said a retry would not help: {reason}"
            ),
            ProviderError::NotText(what) => write!(
                f,
                "provider.generate() must resolve to the summary as a string; it resolved to {what}"
            ),
            ProviderError::Aborted => write!(f, "the compaction was cancelled"),
        }
    }
}
