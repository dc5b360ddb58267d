//! What a compactor reads before it acts: the logs as stored, placed in their iterations and
//! counted as the rules see them, with the lease and the app's usage; and, from them, the
//! ledger, the prompt and the plan a compaction would start from. Reads only.

use crate::core::error::StorageError;
use crate::core::log::placement::PlacedIterations;
use crate::core::model::facts::Ledger;
use crate::core::model::outcome::CompactionPlan;
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::ports::usage::PromptUsage;
use crate::core::steps::digest::Digest;
use crate::core::steps::prompt::build_prompt;
use crate::core::steps::rules::{plan_of, RuleInput};
use crate::core::steps::selection::Selection;
use crate::core::store::archives::Archives;
use crate::core::store::keys::StorageKeys;
use crate::core::store::lease::LeaseHolder;
use crate::core::store::log_store::LogStore;
use crate::core::store::raw_logs::ReadLogs;

/// The logs as one compactor sees them.
pub struct LogView<'a, S, C> {
    /// The logs.
    pub logs: &'a LogStore<S, C>,
    /// The logs' keys with the compactor's archive prefix and metrics key.
    pub keys: &'a StorageKeys,
    /// The store the archives are in.
    pub archives: &'a dyn KeyValueStore,
    /// The compactor's options.
    pub settings: &'a CompactorSettings,
    /// The compactor's side of the lease.
    pub lease: &'a LeaseHolder,
    /// The app's own measure of its prompt.
    pub usage: &'a PromptUsage,
}

/// The logs as read at one moment, placed, and what the rules see of them.
pub struct Observed {
    /// The stored texts and their entries.
    pub read: ReadLogs,
    /// The iteration of every entry.
    pub placed: PlacedIterations,
    /// What the rules look at.
    pub input: RuleInput,
}

impl<S: KeyValueStore, C: Clock> LogView<'_, S, C> {
    /// Usage (0..1, can exceed 1) at `log_tokens`: the app's measure when it gives one
    /// (`with_report` false: a reported size is not counted), else the logs plus `baseTokens`.
    pub fn usage_at(&self, log_tokens: usize, with_report: bool) -> f64 {
        match self.usage.prompt_tokens(with_report) {
            Some(tokens) => tokens as f64 / self.settings.context_window_tokens as f64,
            None => self.settings.usage(log_tokens),
        }
    }

    /// Share of the context window in use now.
    pub fn context_usage(&self) -> Result<f64, StorageError> {
        Ok(self.usage_at(self.logs.estimate_tokens()?, true))
    }

    /// The logs as stored, placed and counted (one read, one count); `compacting` says whether
    /// this compactor is busy.
    pub fn observe(&self, compacting: bool) -> Result<Observed, StorageError> {
        let read = self.logs.read()?;
        let placed = read.parsed.placed_iterations();
        let census = read.parsed.census_of(&placed);
        let input = RuleInput {
            current_iteration: census.current,
            iteration_running: self.logs.iteration_running(),
            log_tokens: census.tokens,
            usage: self.usage_at(census.tokens, true),
            compacting,
            compacting_elsewhere: self.lease.held_elsewhere(self.logs)?,
            summary_tokens: census.summary_tokens,
            new_tokens: census.compacted_tokens - census.summary_tokens,
        };
        Ok(Observed {
            read,
            placed,
            input,
        })
    }

    /// The facts the summary of `selection` must keep: those its digest gives, the app's pins,
    /// and those the earlier summaries in it had to keep (read from their archives).
    pub fn ledger_of(
        &self,
        selection: &Selection<'_>,
        digest: &Digest,
    ) -> Result<Ledger, StorageError> {
        let carried = Archives::new(self.logs, self.keys, self.archives).carried_facts(selection);
        Ok(Ledger::draw(
            selection,
            digest,
            &self.logs.pins()?,
            &carried,
        ))
    }

    /// The prompt a compaction would send now.
    pub fn prompt(&self) -> Result<String, StorageError> {
        let snapshot = self.logs.snapshot()?;
        let selection = Selection::of(&snapshot);
        let ledger = self.ledger_of(&selection, &Digest::of(&selection))?;
        Ok(build_prompt(&selection, self.settings, &ledger))
    }

    /// What a compaction would do now; `compacting` says whether this compactor is busy.
    pub fn plan(&self, compacting: bool) -> Result<CompactionPlan, StorageError> {
        let observed = self.observe(compacting)?;
        let selection = Selection::placed(&observed.read.parsed, &observed.placed);
        let ledger = self.ledger_of(&selection, &Digest::of(&selection))?;
        let prompt = build_prompt(&selection, self.settings, &ledger);
        Ok(plan_of(
            &selection,
            &observed.input,
            &ledger,
            &prompt,
            self.settings,
        ))
    }
}
