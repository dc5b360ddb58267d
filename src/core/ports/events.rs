//! What a compaction tells the app's UI, and the port it tells it through.

use std::cell::Cell;

use crate::core::error::redact::redact;
use crate::core::error::CompactionError;
use crate::core::json::write::{ObjectOut, ToJson};
use crate::core::model::fallback::FallbackReason;
use crate::core::model::outcome::{CompactionResult, RecordedResult};
use crate::core::model::phase::Phase;
use crate::core::model::set_aside::SetAside;
use crate::core::model::settings::Trigger;

/// One event of a compaction; `name()` is the DOM event type, the value its `detail`.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactionEvent {
    /// `compaction_start`
    Start {
        /// What triggered it.
        trigger: Trigger,
        /// The current iteration N (kept verbatim).
        iteration: u32,
        /// Usage (0..1) before.
        context_usage: f64,
    },
    /// `compaction_phase_change`
    PhaseChange {
        /// The phase entered.
        phase: Phase,
        /// The phase left.
        previous: Phase,
    },
    /// `compaction_progress`
    Progress {
        /// The phase running.
        phase: Phase,
        /// 0..100, never going down within one compaction.
        percent: u8,
        /// What is happening, for people.
        message: String,
        /// Milliseconds since the compaction started.
        elapsed_ms: f64,
    },
    /// `compaction_archived`
    Archived {
        /// Key of the archive written.
        archive_key: String,
        /// Its timestamp (epoch ms).
        timestamp: u64,
    },
    /// `compaction_complete`
    Complete {
        /// What the compaction did.
        result: Box<CompactionResult>,
    },
    /// `compaction_complete` of a compaction a closed tab left complete, found on recovery.
    Recovered {
        /// What the compaction did, as its journal recorded it.
        result: Box<RecordedResult>,
    },
    /// `compaction_error`
    Error {
        /// The error code.
        code: &'static str,
        /// What went wrong, for people.
        message: String,
        /// The phase it stopped in.
        phase: Phase,
    },
    /// `compaction_retry`: an attempt failed and another follows.
    Retry {
        /// Why: `invalid_summary`, `http_429`, `http_503`, `network`, `timeout`, `provider`.
        reason: String,
        /// The attempt about to start (2 for the first retry).
        attempt: u32,
        /// The wait before it, in ms.
        wait_ms: u32,
        /// What happened, for people.
        message: String,
    },
    /// `compaction_rolled_back`
    RolledBack {
        /// The archive restored.
        archive_key: String,
    },
    /// `archives_lost`: archives the live summaries and placeholders name that are no longer
    /// stored (deleted, expired, or evicted by the browser); their originals cannot be read back.
    ArchivesLost {
        /// Their keys.
        keys: Vec<String>,
    },
    /// `key_set_aside`: a key of the package's own did not read (the journal an interrupted
    /// compaction left, the pins), so it was set aside rather than obeyed or left to stop every
    /// compaction; its text is kept under `<key>_corrupt` where there was room.
    SetAside(SetAside),
    /// `storage_pressure`: the origin's storage was at least 80% full as a compaction began;
    /// the expired archives were purged first, and the figures are those after.
    StoragePressure {
        /// Bytes in use.
        usage: f64,
        /// Bytes the origin may use.
        quota: f64,
        /// `usage / quota`.
        share: f64,
        /// The keys of the expired archives purged (never one that had not expired).
        purged: Vec<String>,
    },
    /// `compaction_fallback`: every attempt of the model failed, and the package stores its own
    /// summary instead (the fallback rung).
    Fallback {
        /// Why the model's summary could not be used (its message redacted where it is made,
        /// since the result carries it too).
        reason: FallbackReason,
    },
    /// `user_items_over_budget`: the user's items outgrew their share of the summary; the
    /// oldest facts and preferences left first, for lines that name them (rules last), and the
    /// compaction went on.
    UserItemsOverBudget {
        /// The tokens all the items would take.
        tokens: usize,
        /// Their share.
        budget: usize,
        /// What left, and how to bring it back.
        message: String,
    },
}

impl CompactionEvent {
    /// The DOM event type.
    pub fn name(&self) -> &'static str {
        match self {
            CompactionEvent::Start { .. } => "compaction_start",
            CompactionEvent::PhaseChange { .. } => "compaction_phase_change",
            CompactionEvent::Progress { .. } => "compaction_progress",
            CompactionEvent::Archived { .. } => "compaction_archived",
            CompactionEvent::Complete { .. } | CompactionEvent::Recovered { .. } => {
                "compaction_complete"
            }
            CompactionEvent::Error { .. } => "compaction_error",
            CompactionEvent::Retry { .. } => "compaction_retry",
            CompactionEvent::RolledBack { .. } => "compaction_rolled_back",
            CompactionEvent::ArchivesLost { .. } => "archives_lost",
            CompactionEvent::SetAside(_) => "key_set_aside",
            CompactionEvent::StoragePressure { .. } => "storage_pressure",
            CompactionEvent::Fallback { .. } => "compaction_fallback",
            CompactionEvent::UserItemsOverBudget { .. } => "user_items_over_budget",
        }
    }
}

/// The event's `detail`: its fields, named in camelCase.
impl ToJson for CompactionEvent {
    fn write_json(&self, out: &mut String) {
        let mut detail = ObjectOut::new(out);
        match self {
            CompactionEvent::Start {
                trigger,
                iteration,
                context_usage,
            } => detail
                .field("trigger", trigger)
                .field("iteration", iteration)
                .field("contextUsage", context_usage),
            CompactionEvent::PhaseChange { phase, previous } => {
                detail.field("phase", phase).field("previous", previous)
            }
            CompactionEvent::Progress {
                phase,
                percent,
                message,
                elapsed_ms,
            } => detail
                .field("phase", phase)
                .field("percent", &u32::from(*percent))
                .field("message", message)
                .field("elapsedMs", elapsed_ms),
            CompactionEvent::Archived {
                archive_key,
                timestamp,
            } => detail
                .field("archiveKey", archive_key)
                .field("timestamp", timestamp),
            CompactionEvent::Complete { result } => detail.field("result", &**result),
            CompactionEvent::Recovered { result } => detail.field("result", &**result),
            CompactionEvent::Error {
                code,
                message,
                phase,
            } => detail
                .field("code", *code)
                .field("message", message)
                .field("phase", phase),
            CompactionEvent::Retry {
                reason,
                attempt,
                wait_ms,
                message,
            } => detail
                .field("reason", reason)
                .field("attempt", attempt)
                .field("waitMs", wait_ms)
                .field("message", message),
            CompactionEvent::RolledBack { archive_key } => detail.field("archiveKey", archive_key),
            CompactionEvent::ArchivesLost { keys } => detail.field("keys", keys),
            CompactionEvent::SetAside(SetAside {
                key,
                kept_as,
                reason,
            }) => detail
                .field("key", key)
                .field("keptAs", kept_as)
                .field("reason", reason),
            CompactionEvent::StoragePressure {
                usage,
                quota,
                share,
                purged,
            } => detail
                .field("usage", usage)
                .field("quota", quota)
                .field("share", share)
                .field("purged", purged),
            CompactionEvent::Fallback { reason } => detail
                .field("code", &reason.code)
                .field("message", &reason.message),
            CompactionEvent::UserItemsOverBudget {
                tokens,
                budget,
                message,
            } => detail
                .field("tokens", tokens)
                .field("budget", budget)
                .field("message", message),
        };
    }
}

/// Where events go (an `EventTarget` in the browser). Must not fail: a broken listener is the
/// listener's problem, never the compaction's.
pub trait EventSink {
    /// Delivers one event.
    fn emit(&self, event: &CompactionEvent);
}

/// What one compactor tells the app: the phase it is in, and the events through its sink. Every
/// error message leaves without anything shaped like an API key.
pub struct Reporter {
    sink: Box<dyn EventSink>,
    phase: Cell<Phase>,
}

impl Reporter {
    /// A reporter through `sink`, idle.
    pub fn new(sink: Box<dyn EventSink>) -> Self {
        Self {
            sink,
            phase: Cell::new(Phase::Idle),
        }
    }

    /// The phase of the running (or last) compaction.
    pub fn phase(&self) -> Phase {
        self.phase.get()
    }

    /// Delivers `event`, its message redacted if it is an error.
    pub fn emit(&self, event: CompactionEvent) {
        let event = match event {
            CompactionEvent::Error {
                code,
                message,
                phase,
            } => CompactionEvent::Error {
                code,
                message: redact(&message, None).into_owned(),
                phase,
            },
            other => other,
        };
        self.sink.emit(&event);
    }

    /// Tells the app that `err` stopped what ran in `phase`, `message` saying it for people.
    pub fn error(&self, err: &CompactionError, phase: Phase, message: String) {
        self.emit(CompactionEvent::Error {
            code: err.code().as_str(),
            message,
            phase,
        });
    }

    /// Enters `phase`.
    pub fn enter(&self, phase: Phase) {
        let previous = self.phase.replace(phase);
        self.emit(CompactionEvent::PhaseChange { phase, previous });
    }

    /// Enters `phase` of a compaction (unless it is in it) that has reached `percent` after
    /// `elapsed_ms`.
    pub fn progress(&self, phase: Phase, percent: u8, message: String, elapsed_ms: f64) {
        if self.phase.get() != phase {
            self.enter(phase);
        }
        self.emit(CompactionEvent::Progress {
            phase,
            percent,
            message,
            elapsed_ms,
        });
    }
}

#[cfg(any(test, feature = "testing"))]
/// Keeps every event, for tests and replays.
#[derive(Debug, Default, Clone)]
pub struct RecordingSink {
    events: std::rc::Rc<std::cell::RefCell<Vec<CompactionEvent>>>,
    /// A cancel tripped as a phase begins (see [`RecordingSink::cancel_as`]).
    cancel_as: std::rc::Rc<std::cell::RefCell<Option<(Phase, crate::core::ports::cancel::Cancel)>>>,
}

#[cfg(any(test, feature = "testing"))]
impl RecordingSink {
    /// The events so far.
    pub fn events(&self) -> Vec<CompactionEvent> {
        self.events.borrow().clone()
    }

    /// The event names so far.
    pub fn names(&self) -> Vec<&'static str> {
        self.events
            .borrow()
            .iter()
            .map(CompactionEvent::name)
            .collect()
    }

    /// Forgets the events so far.
    pub fn clear(&self) {
        self.events.borrow_mut().clear();
    }

    /// Trips `cancel` as `phase` begins, as an app's listener of `compaction_phase_change`
    /// that calls `abort()` would.
    pub fn cancel_as(&self, phase: Phase, cancel: crate::core::ports::cancel::Cancel) {
        self.cancel_as.replace(Some((phase, cancel)));
    }
}

#[cfg(any(test, feature = "testing"))]
impl EventSink for RecordingSink {
    fn emit(&self, event: &CompactionEvent) {
        self.events.borrow_mut().push(event.clone());
        if let (CompactionEvent::PhaseChange { phase, .. }, Some((at, cancel))) =
            (event, &*self.cancel_as.borrow())
        {
            if phase == at {
                cancel.cancel();
            }
        }
    }
}
