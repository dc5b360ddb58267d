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

/// Where usage comes from for one compactor: the tokens the app last reported (until the next
/// compaction), else its measure, else the package's count of the logs plus `baseTokens`.
#[derive(Default)]
pub struct PromptUsage {
    measure: Option<Box<dyn UsageMeasure>>,
    reported: std::cell::Cell<Option<usize>>,
}

impl PromptUsage {
    /// Usage measured by `measure` where it can say.
    pub fn measured_by(measure: Box<dyn UsageMeasure>) -> Self {
        Self {
            measure: Some(measure),
            reported: Default::default(),
        }
    }

    /// Records the tokens of the prompt the app last sent.
    pub fn report(&self, tokens: usize) {
        self.reported.set(Some(tokens));
    }

    /// Forgets the reported size: it described the prompt before a compaction.
    pub fn forget_report(&self) {
        self.reported.set(None);
    }

    /// Tokens of the app's prompt, reported or measured (`with_report` false: measured only);
    /// `None` when the app says nothing.
    pub fn prompt_tokens(&self, with_report: bool) -> Option<usize> {
        self.reported
            .get()
            .filter(|_| with_report)
            .or_else(|| self.measure.as_ref()?.prompt_tokens())
    }
}
