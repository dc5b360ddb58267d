//! A key of the package's own that did not read, and what was done with it.

/// A key of the package's own that did not read, set aside so that it stops nothing: its text
/// kept under `<key>_corrupt` where there is room, the key removed (`store::stored_json::set_aside`).
#[derive(Debug, Clone, PartialEq)]
pub struct SetAside {
    /// The key.
    pub key: String,
    /// Where its text is kept, or `None` when storage had no room for it.
    pub kept_as: Option<String>,
    /// Why it did not read.
    pub reason: String,
}
