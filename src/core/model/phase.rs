//! The phases of a compaction, in the order they run.

use crate::core::json::record::json_names;

/// Where a compaction is (the `phase` of the compactor and of its events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// Nothing running.
    #[default]
    Idle,
    /// Waiting for the running iteration to finish.
    Waiting,
    /// Marking the logs frozen.
    Freezing,
    /// Reading iterations 1..N-1.
    Gathering,
    /// Moving bulky bodies of older iterations to an archive (no model call).
    Clearing,
    /// Writing the prompt.
    BuildingPrompt,
    /// Waiting for the provider's summary.
    Compacting,
    /// Checking the summary.
    Validating,
    /// Waiting before the one retry.
    Retrying,
    /// Writing the originals to an archive.
    Archiving,
    /// Swapping the summary in.
    Replacing,
    /// Updating the metrics.
    RecordingMetrics,
    /// Lifting the freeze.
    Unfreezing,
    /// Done; the result was delivered.
    Complete,
    /// Stopped by an error; the logs are as before.
    Error,
    /// Restoring an archive.
    RollingBack,
}

// In the order a compaction runs through them (rolling back last).
json_names! {
    all Phase {
        Idle = "idle",
        Waiting = "waiting",
        Freezing = "freezing",
        Gathering = "gathering",
        Clearing = "clearing",
        BuildingPrompt = "building_prompt",
        Compacting = "compacting",
        Validating = "validating",
        Retrying = "retrying",
        Archiving = "archiving",
        Replacing = "replacing",
        RecordingMetrics = "recording_metrics",
        Unfreezing = "unfreezing",
        Complete = "complete",
        Error = "error",
        RollingBack = "rolling_back",
    }
}

impl Phase {
    /// Progress (percent) a compaction has reached when it enters this phase; `attempt` is 1
    /// for the first provider call and 2 for the retry.
    pub(crate) fn progress_percent(self, attempt: u32) -> u8 {
        let retry = attempt > 1;
        match self {
            Phase::Idle | Phase::Waiting => 0,
            Phase::Freezing => 5,
            Phase::Gathering => 10,
            Phase::Clearing => 15,
            Phase::BuildingPrompt => 20,
            Phase::Compacting if retry => 72,
            Phase::Compacting => 30,
            Phase::Validating if retry => 82,
            Phase::Validating => 65,
            Phase::Retrying => 68,
            Phase::Archiving => 86,
            Phase::Replacing => 92,
            Phase::RecordingMetrics => 96,
            Phase::Unfreezing => 98,
            Phase::Complete => 100,
            Phase::Error | Phase::RollingBack => 0,
        }
    }

    /// What a person reads in the progress view while this phase runs.
    pub fn message(self) -> &'static str {
        match self {
            Phase::Idle => "Idle",
            Phase::Waiting => "Waiting for the current iteration to finish",
            Phase::Freezing => "Freezing the logs",
            Phase::Gathering => "Gathering the iterations to compact",
            Phase::Clearing => "Clearing bulky tool output of older iterations",
            Phase::BuildingPrompt => "Building the compaction prompt",
            Phase::Compacting => "Asking the model for a summary",
            Phase::Validating => "Checking the summary's sections",
            Phase::Retrying => "Retrying",
            Phase::Archiving => "Archiving the original logs",
            Phase::Replacing => "Swapping the summary in",
            Phase::RecordingMetrics => "Recording metrics",
            Phase::Unfreezing => "Unfreezing the logs",
            Phase::Complete => "Compaction complete",
            Phase::Error => "Compaction failed; the logs are unchanged",
            Phase::RollingBack => "Restoring the archived logs",
        }
    }
}
