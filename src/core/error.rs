//! Typed errors of the core and the stable codes they carry to JavaScript.

use std::fmt;

/// The stable, machine-readable code of an error; the `code` property of the JS `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// A key of the package holds text that is not the JSON it should be.
    StorageCorrupt,
    /// localStorage is full; the previous value of the key is intact.
    StorageQuota,
    /// localStorage cannot be used at all (blocked cookies, a worker, an unknown failure).
    StorageUnavailable,
    /// An argument passed by the caller does not have the expected shape.
    InvalidInput,
}

impl ErrorCode {
    /// The snake_case string used in JavaScript.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::StorageCorrupt => "storage_corrupt",
            ErrorCode::StorageQuota => "storage_quota",
            ErrorCode::StorageUnavailable => "storage_unavailable",
            ErrorCode::InvalidInput => "invalid_input",
        }
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
        /// Size of the value that did not fit, in UTF-16 code units (what the quota counts).
        units_needed: usize,
    },
    /// The storage itself failed or cannot be reached.
    Unavailable {
        /// What the platform reported.
        reason: String,
    },
}

impl StorageError {
    /// The code reported to JavaScript.
    pub fn code(&self) -> ErrorCode {
        match self {
            StorageError::Corrupt { .. } => ErrorCode::StorageCorrupt,
            StorageError::Quota { .. } => ErrorCode::StorageQuota,
            StorageError::Unavailable { .. } => ErrorCode::StorageUnavailable,
        }
    }

    /// The storage key concerned, when there is one.
    pub fn key(&self) -> Option<&str> {
        match self {
            StorageError::Corrupt { key, .. } | StorageError::Quota { key, .. } => Some(key),
            StorageError::Unavailable { .. } => None,
        }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Corrupt { key, reason } => write!(
                f,
                "localStorage key \"{key}\" does not hold valid log data ({reason}); it was left untouched"
            ),
            StorageError::Quota { key, units_needed } => write!(
                f,
                "localStorage is full: writing \"{key}\" needs {units_needed} characters; the previous value is intact"
            ),
            StorageError::Unavailable { reason } => {
                write!(f, "localStorage is not available: {reason}")
            }
        }
    }
}

impl std::error::Error for StorageError {}
