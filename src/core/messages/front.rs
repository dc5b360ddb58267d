//! The message front: the app's list written into the core's logs before each question, and
//! the list to send read back from them after a compaction. Every step is the core's own; the
//! front only translates.

use std::cell::RefCell;
use std::rc::Rc;

use crate::core::error::StorageError;
use crate::core::log::iteration::parse_summary_header;
use crate::core::messages::conversation::{Conversation, NotAMessage};
use crate::core::messages::logs::{originals, reasoning_log, tool_log, ToolEntry};
use crate::core::messages::rebuild::{rebuild, Compacted, Out};
use crate::core::messages::rollback::rolled_back;
use crate::core::messages::shape::Shape;
use crate::core::messages::stitch::{LastCompaction, Stitched};
use crate::core::messages::wording::in_turns;
use crate::core::model::clearing::{Clearing, ClearingRules};
use crate::core::model::outcome::CompactionResult;
use crate::core::model::settings::CompactorSettings;
use crate::core::ports::clock::{iso_timestamp, Clock};
use crate::core::ports::storage::KeyValueStore;
use crate::core::run::compactor::Compactor;
use crate::core::store::last_compaction::StoredLast;

/// The newest turns whose tool results stay whole by default: the model has read the others
/// and the recall tool brings any back.
pub const KEEP_TURNS: u32 = 1;

/// The clearing of a message front when the app's options give none: the core's, keeping the
/// results of the newest [`KEEP_TURNS`] turns whole.
pub fn default_clearing() -> Clearing {
    Clearing::On(ClearingRules {
        keep_iterations: Some(KEEP_TURNS),
        ..ClearingRules::default()
    })
}

/// The settings of a message front when the app gives none: the core's, with
/// [`default_clearing`].
pub fn default_settings() -> CompactorSettings {
    CompactorSettings {
        clearing: default_clearing(),
        ..CompactorSettings::default()
    }
}

/// Why a list could not be taken.
#[derive(Debug, Clone, PartialEq)]
pub enum FrontError {
    /// A message is not an object.
    NotAMessage(NotAMessage),
    /// The logs it is written into could not be written.
    Storage(StorageError),
}

impl From<StorageError> for FrontError {
    fn from(err: StorageError) -> Self {
        FrontError::Storage(err)
    }
}

impl From<NotAMessage> for FrontError {
    fn from(err: NotAMessage) -> Self {
        FrontError::NotAMessage(err)
    }
}

/// A compactor of message lists of one shape, over the core's compactor.
pub struct MessageFront<S, C> {
    shape: Shape,
    engine: Rc<Compactor<S, C>>,
    last: RefCell<LastCompaction>,
    /// Where the last compaction is kept (across reloads where it is the page's
    /// `localStorage`).
    kept: StoredLast<S>,
}

impl<S: KeyValueStore, C: Clock> MessageFront<S, C> {
    /// A front for lists of `shape` over `engine` (whose logs hold nothing of the app's own),
    /// its last compaction kept in `store` (read from it now: a record that cannot be read is
    /// none, every list then taken as it is).
    pub fn new(shape: Shape, engine: Rc<Compactor<S, C>>, store: S) -> Self {
        let kept = StoredLast::new(store, engine.logs().borrow().keys());
        let last = kept.read().map(|text| LastCompaction::read(&text));
        MessageFront {
            shape,
            engine,
            last: RefCell::new(last.unwrap_or_default()),
            kept,
        }
    }

    /// The list to work on for `messages` (see [`LastCompaction::stitch`]).
    pub fn working(&self, messages: Vec<String>) -> Stitched {
        self.last.borrow().stitch(messages)
    }

    /// Forgets what the last compaction was given and gave (a rollback undid it).
    pub fn forget(&self) -> Result<(), StorageError> {
        *self.last.borrow_mut() = LastCompaction::default();
        self.kept.remove()
    }

    /// The list after `Compactor::rollback` put an archive of the compaction of `messages`
    /// (loaded as `conversation`) back into the logs (see [`rolled_back`]).
    pub fn rolled_back(
        &self,
        messages: &[String],
        conversation: &Conversation,
    ) -> Result<Vec<Out>, StorageError> {
        let logs = self.engine.logs().borrow();
        let originals = logs.originals()?.unwrap_or_default();
        Ok(rolled_back(
            conversation,
            messages,
            &logs.reasoning_log()?,
            &logs.tool_activity_log_json()?,
            &originals,
        ))
    }

    /// A compaction of `stitched`'s list gave `outs` over it. Kept in memory whatever storage
    /// does: a record storage refused costs, after a reload, one compaction of what this one
    /// did, never a message.
    pub fn remember(&self, stitched: &Stitched, outs: &[Out]) {
        let mut last = self.last.borrow_mut();
        last.record(stitched, outs);
        let _ = self.kept.write(&last.text());
    }

    /// The core's compactor underneath.
    pub fn engine(&self) -> &Rc<Compactor<S, C>> {
        &self.engine
    }

    /// The shape of the lists taken.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// `messages` (each one's JSON text) written into the logs as turns (the user's later words
    /// as lines that record them, which every summary keeps as items); returns the turns read.
    pub fn load(&self, messages: &[String]) -> Result<Conversation, FrontError> {
        let conversation = Conversation::read(self.shape, messages)?;
        let mut logs = self.engine.logs().borrow_mut();
        let stamp = iso_timestamp(logs.clock().now_ms());
        logs.replace(
            &reasoning_log(&conversation),
            &tool_log(&conversation, messages, &stamp),
        )?;
        logs.set_originals(&originals(&conversation, messages))?;
        // A call still awaiting its result starts what a summary keeps.
        let waiting = (conversation.turns.iter())
            .find(|turn| turn.calls.iter().any(|call| call.result.is_none()))
            .map(|turn| turn.iteration);
        logs.set_verbatim_from(waiting);
        Ok(conversation)
    }

    /// What the last compaction left in the logs: the summary at their head, each call's body.
    pub fn compacted(&self) -> Result<Compacted, StorageError> {
        let logs = self.engine.logs().borrow();
        let summary = logs.reasoning_log()?.into_iter().find_map(|entry| {
            let (_, last) = parse_summary_header(&entry)?;
            Some((entry, last))
        });
        let tools = logs.tool_activity_log_json()?;
        Ok(Compacted {
            summary,
            details: Compacted::details_of(&ToolEntry::all(&tools)),
        })
    }

    /// Whether the loop should compact `messages` now (see `Compactor::should_auto_compact`).
    pub fn should_compact(&self, messages: &[String]) -> Result<bool, FrontError> {
        if self.engine.busy() {
            return Ok(false);
        }
        self.load(messages)?;
        Ok(self.engine.should_auto_compact()?)
    }

    /// What the compaction of `messages` (loaded as `conversation`) that gave `result` left:
    /// the list to send and what to report.
    pub fn finish(
        &self,
        messages: &[String],
        conversation: &Conversation,
        result: CompactionResult,
    ) -> Result<MessageCompaction, StorageError> {
        let compacted = self.compacted()?;
        let list = rebuild(self.shape, conversation, messages, &compacted);
        let written = compacted.new_summary(conversation);
        // The rebuild keeps every message in place but what it writes: a new summary, a body
        // cleared.
        let changed = list.iter().any(|out| matches!(out, Out::New(_)));
        Ok(MessageCompaction {
            compacted: changed,
            list,
            turns: written.map(|(_, last)| [conversation.first_iteration(), last]),
            summary: written.map(|(entry, _)| in_turns(entry)),
            result,
        })
    }
}

/// What a compaction of a list gave.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageCompaction {
    /// The list to send.
    pub list: Vec<Out>,
    /// Whether the compaction changed the list (else it made nothing new of it).
    pub compacted: bool,
    /// The first and last iteration (turn) the new summary covers, when one was written.
    pub turns: Option<[u32; 2]>,
    /// The summary message's text, when one was written.
    pub summary: Option<String>,
    /// What the core did.
    pub result: CompactionResult,
}
