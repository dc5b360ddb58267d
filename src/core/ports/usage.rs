//! How full the app's context is, as the app itself measures it.
//!
//! By default usage is the package's count of the three logs plus `baseTokens`. An app whose
//! prompt holds only part of the logs (say the summary and the last three entries) knows
//! better: it can report the tokens of the prompt it last sent, or give a function that says
//! what its next prompt would take.

/// The app's own measure of its prompt.
pub trait UsageMeasure {
    /// Tokens of the prompt the app would send now; `None` when it cannot say (the package's
    /// count is used then).
    fn prompt_tokens(&self) -> Option<usize>;
}
