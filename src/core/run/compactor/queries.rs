//! What a compactor answers without compacting: usage, whether and when a compaction would go
//! ahead, the prompt, the ledger and the plan. Each reads the logs once through [`LogView`].

use super::Compactor;
use crate::core::error::StorageError;
use crate::core::model::facts::Ledger;
use crate::core::model::outcome::{CompactionPlan, Wait};
use crate::core::model::reasons::Refusal;
use crate::core::model::settings::Trigger;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::run::view::LogView;
use crate::core::steps::rules::{refusal, wait_of};
use crate::core::store::log_store::LogStore;

impl<S: KeyValueStore, C: Clock> Compactor<S, C> {
    /// The logs as this compactor sees them.
    pub(super) fn view<'a>(&'a self, logs: &'a LogStore<S, C>) -> LogView<'a, S, C> {
        LogView {
            logs,
            shelf: &self.shelf,
            settings: &self.settings,
            usage: &self.usage,
        }
    }

    /// Share (0..1, can exceed 1) of the context window the logs and base tokens take.
    pub fn context_usage(&self) -> Result<f64, StorageError> {
        self.view(&self.logs().borrow()).context_usage()
    }

    /// Why a user-triggered compaction is not allowed now; `None` when it is.
    pub fn can_compact(&self) -> Result<Option<Refusal>, StorageError> {
        Ok(self.user_verdict()?.0)
    }

    /// What `canCompact()` says, from one read of the logs: why a compaction the user asks for
    /// would be refused now, and the running iteration it would wait for first.
    pub fn user_verdict(&self) -> Result<(Option<Refusal>, Option<Wait>), StorageError> {
        let input = self.view(&self.logs().borrow()).observe()?.input;
        let wait = wait_of(&input).filter(|w| w.triggers.contains(&Trigger::User));
        Ok((refusal(&self.settings, &input, Trigger::User), wait))
    }

    /// The running iteration a compaction with `trigger` would wait for now; `None` when it
    /// would go ahead at once.
    pub fn waits_for(&self, trigger: Trigger) -> Result<Option<Wait>, StorageError> {
        let input = self.view(&self.logs().borrow()).observe()?.input;
        Ok(wait_of(&input).filter(|w| w.triggers.contains(&trigger)))
    }

    /// Whether the loop's compaction should start: usage reached `autoTriggerUsage`, or the
    /// clearing rung would free at least `clearing.atLeastTokens` (no model call).
    pub fn should_auto_compact(&self) -> Result<bool, StorageError> {
        let logs = self.logs().borrow();
        let view = self.view(&logs);
        let observed = view.observe()?;
        let guard = self.guard.get();
        if guard.should_auto_compact(&self.settings, &observed.input) {
            return Ok(true);
        }
        Ok(guard.may_clear(&self.settings, &observed.input) && view.clearing_due(&observed))
    }

    /// The prompt `compact()` would send now.
    pub fn build_prompt(&self) -> Result<String, StorageError> {
        let logs = self.logs().borrow();
        let view = self.view(&logs);
        Ok(view.prepare(&view.observe()?)?.prompt)
    }

    /// The facts the summary of a compaction now would have to keep.
    pub fn ledger(&self) -> Result<Ledger, StorageError> {
        let logs = self.logs().borrow();
        let view = self.view(&logs);
        Ok(view.prepare(&view.observe()?)?.ledger)
    }

    /// What `compact()` would do now, without calling the provider (and why it would refuse).
    pub fn plan(&self) -> Result<CompactionPlan, StorageError> {
        self.view(&self.logs().borrow()).plan()
    }
}
