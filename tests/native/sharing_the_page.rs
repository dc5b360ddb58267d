//! A compaction shares the page (#53): it lets the page run between its stages (the summary's and
//! the clearing rung's alike), and what it promises holds across those breaks: a cancel at any break before the archive is written
//! leaves every key as it was, a second compaction (this tab's or another's) is `busy` at every
//! break, and the app hears progress at least every 250 ms while the model works.
#![cfg(not(target_arch = "wasm32"))]
// The shared fixtures use the standard library's maps (the house rules are about the
// package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode, ProviderFailure};
use context_compactor::core::model::clearing::Rung;
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::ports::cancel::Cancel;
use context_compactor::core::ports::clock::{Clock, ManualClock};
use context_compactor::core::ports::events::{CompactionEvent, RecordingSink};
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::{run_ready, LocalBoxFuture, Timer};
use context_compactor::core::providers::offline::OfflineProvider;
use context_compactor::core::providers::port::{Generation, SummaryProvider, SummaryRequest};
use context_compactor::core::run::compactor::Compactor;

/// The compactions that take breaks: the user's summary and the loop's clearing of bulky tool
/// output (no model call).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Summary,
    Clearing,
}

const KINDS: [Kind; 2] = [Kind::Summary, Kind::Clearing];

impl Kind {
    /// A session big enough that its compaction, on a clock that moves 7 ms at every reading,
    /// takes several breaks.
    fn rig(self, memory: MemoryStore) -> Rig {
        let clock = ManualClock::ticking(NOV_22_2026, 7.0);
        match self {
            Kind::Summary => {
                let rig = Rig::offline(memory, clock.clone(), small_window());
                grow_session(&rig.logs, &clock, 12, 5);
                rig
            }
            Kind::Clearing => {
                let logs = logs_over(&memory, &clock);
                bulky_session(&logs, &clock, 50);
                let tokens = logs.borrow().estimate_tokens().unwrap();
                // `recommendedUsage` given: no summary follows a clearing that brings usage
                // under it (by default one would, as it cuts two thirds of what a turn reads).
                let settings = CompactorSettings {
                    context_window_tokens: tokens * 10 / 9,
                    summary_budget_tokens: Some(2_000),
                    recommended_usage: Some(0.6),
                    ..Default::default()
                };
                Rig::offline(memory, clock, settings)
            }
        }
    }

    fn trigger(self) -> Trigger {
        match self {
            Kind::Summary => Trigger::User,
            Kind::Clearing => Trigger::Auto,
        }
    }

    /// Whether `result` is a compaction of this kind.
    fn made(self, result: &CompactionResult) -> bool {
        match self {
            Kind::Summary => result.rung == Rung::Summarize && result.iterations == [1, 11],
            Kind::Clearing => result.rung == Rung::Clear && !result.cleared.is_empty(),
        }
    }

    /// How many breaks an uncancelled compaction of this kind takes.
    fn breaks_of_a_whole_compaction(self) -> usize {
        let rig = self.rig(MemoryStore::new());
        let result = run_ready(rig.compactor.compact(self.trigger()))
            .unwrap()
            .unwrap();
        assert!(self.made(&result), "{self:?}: {result:?}");
        let breaks = rig.timer.breaks();
        assert!(breaks >= 4, "{self:?}: only {breaks} breaks");
        breaks
    }
}

/// Runs `at_break(n)` at the `n`th break (from 1) of the compaction of `rig`.
fn at_each_break(rig: &Rig, at_break: impl Fn(usize) + 'static) {
    let waits = rig.timer.waits.clone();
    *rig.timer.on_sleep.borrow_mut() = Some(Box::new(move |_| {
        let waits = waits.borrow();
        if waits.last() == Some(&0) {
            let n = waits.iter().filter(|ms| **ms == 0).count();
            drop(waits);
            at_break(n);
        }
    }));
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_cancel_at_any_break_before_the_archive_leaves_every_key_byte_identical() {
    for kind in KINDS {
        let breaks = kind.breaks_of_a_whole_compaction();
        let mut aborted = 0;
        for cancel_at in 1..=breaks {
            let rig = kind.rig(MemoryStore::new());
            let before = rig.dump();
            let cancel = Cancel::default();
            let tripped = cancel.clone();
            at_each_break(&rig, move |n| {
                if n == cancel_at {
                    tripped.cancel();
                }
            });
            let outcome = run_ready(rig.compactor.compact_until(kind.trigger(), cancel)).unwrap();
            match outcome {
                Err(CompactionError::Aborted) => {
                    aborted += 1;
                    assert_eq!(
                        rig.dump(),
                        before,
                        "{kind:?} cancelled at break {cancel_at}"
                    );
                    assert!(!holds_an_archive(&rig.memory));
                    let phases = rig.events.events();
                    assert!(phases.iter().any(|e| matches!(
                        e,
                        CompactionEvent::Error { code, .. } if *code == ErrorCode::Aborted.as_str()
                    )));
                }
                // Past the archive the compaction completes.
                Ok(result) => {
                    assert!(holds_an_archive(&rig.memory), "{result:?}");
                    assert!(kind.made(&result), "{kind:?}: {result:?}");
                }
                Err(other) => panic!("{kind:?} cancelled at break {cancel_at}: {other:?}"),
            }
            assert!(!rig.compactor.busy());
        }
        // Every break but the one after the archive was written honours the cancel.
        assert!(
            aborted >= breaks - 1,
            "{kind:?}: {aborted} of {breaks} breaks aborted"
        );
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn at_every_break_a_second_compaction_here_or_in_another_tab_is_busy() {
    for kind in KINDS {
        let breaks = kind.breaks_of_a_whole_compaction();
        let rig = Rc::new(kind.rig(MemoryStore::new()));
        let settings = rig.compactor.settings().clone();
        let other_tab = Rig::offline(rig.memory.clone(), rig.clock.clone(), settings);
        let other_tab = shelved(other_tab.compactor, |shelf| shelf.with_owner("another-tab"));
        let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
        let (here, log) = (Rc::downgrade(&rig), seen.clone());
        at_each_break(&rig, move |n| {
            let Some(rig) = here.upgrade() else { return };
            let again = run_ready(rig.compactor.compact(kind.trigger())).unwrap();
            let elsewhere = run_ready(other_tab.compact(kind.trigger())).unwrap();
            log.borrow_mut()
                .push((n, again.map(|_| ()), elsewhere.map(|_| ())));
        });
        let result = run_ready(rig.compactor.compact(kind.trigger()))
            .unwrap()
            .unwrap();
        let seen = seen.borrow();
        assert_eq!(seen.len(), breaks, "{kind:?}");
        for (n, again, elsewhere) in seen.iter() {
            let code =
                |outcome: &Result<(), CompactionError>| outcome.as_ref().err().map(|e| e.code());
            assert_eq!(
                code(again),
                Some(ErrorCode::Busy),
                "{kind:?} break {n}, this tab"
            );
            assert_eq!(
                code(elsewhere),
                Some(ErrorCode::Busy),
                "{kind:?} break {n}, the other tab"
            );
        }
        assert!(kind.made(&result), "{kind:?}: {result:?}");
        assert!(!rig.compactor.busy());
    }
}

/// The offline summariser, answering only once the clock has moved `ms` past the call.
struct SlowProvider {
    clock: ManualClock,
    ms: f64,
}

/// Ready once `clock` reads `due` or later.
struct Until {
    clock: ManualClock,
    due: f64,
}

impl Future for Until {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        match self.clock.now_ms() >= self.due {
            true => Poll::Ready(()),
            false => Poll::Pending,
        }
    }
}

impl SummaryProvider for SlowProvider {
    fn model(&self) -> String {
        format!("{} answering after {} ms", OfflineProvider.model(), self.ms)
    }
    fn generate(
        &self,
        request: &SummaryRequest<'_>,
    ) -> LocalBoxFuture<'static, Result<Generation, ProviderFailure>> {
        let answer = OfflineProvider.generate(request);
        let until = Until {
            clock: self.clock.clone(),
            due: self.clock.now_ms() + self.ms,
        };
        Box::pin(async move {
            until.await;
            answer.await
        })
    }
}

/// Sleeps that end when the clock reaches their end, each poll of a sleep not yet over moving
/// the clock 1 ms (time passes while the test polls).
struct SteppingTimer(ManualClock);

impl Timer for SteppingTimer {
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'static, ()> {
        let clock = self.0.clone();
        let due = clock.now_ms() + f64::from(ms);
        Box::pin(std::future::poll_fn(move |_| {
            if clock.now_ms() >= due {
                return Poll::Ready(());
            }
            clock.advance(1.0);
            Poll::Pending
        }))
    }
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn while_the_model_works_the_app_hears_progress_at_least_every_250_ms() {
    let (memory, clock) = (MemoryStore::new(), ManualClock::new(NOV_22_2026));
    let logs = logs_over(&memory, &clock);
    grow_session(&logs, &clock, 6, 2);
    let provider = SlowProvider {
        clock: clock.clone(),
        ms: 3_000.0,
    };
    let events = RecordingSink::default();
    let compactor = Compactor::new(
        logs,
        Box::new(provider),
        Box::new(SteppingTimer(clock.clone())),
        Box::new(events.clone()),
        small_window(),
    )
    .unwrap();
    let result = run_ready(compactor.compact(Trigger::User))
        .unwrap()
        .unwrap();
    let during_the_call: Vec<f64> = events
        .events()
        .iter()
        .filter_map(|event| match event {
            CompactionEvent::Progress {
                phase: Phase::Compacting,
                elapsed_ms,
                ..
            } => Some(*elapsed_ms),
            _ => None,
        })
        .collect();
    assert!(during_the_call.len() >= 3_000 / 250, "{during_the_call:?}");
    for pair in during_the_call.windows(2) {
        assert!(pair[1] - pair[0] <= 250.0, "{during_the_call:?}");
    }
    assert!(result.duration_ms >= 3_000.0);
}
