//! Whatever a model writes cannot trap, stall or fool the package (issue #49): answers nested
//! deeper than any stack, and what follows them.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use common::*;
use context_compactor::core::error::{CompactionError, ErrorCode};
use context_compactor::core::model::outcome::CompactionResult;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::ports::storage::MemoryStore;
use context_compactor::core::ports::timer::run_ready;

fn compact(rig: &Rig) -> Result<CompactionResult, CompactionError> {
    run_ready(rig.compactor.compact(Trigger::User)).expect("the compaction waited on nothing")
}

/// A JSON answer whose first section holds `depth` levels of arrays or of objects.
fn nested_answer(depth: usize, objects: bool) -> String {
    let (open, close) = if objects {
        (r#"{"point":"#, "}")
    } else {
        ("[", "]")
    };
    format!(
        r#"{{"objective": {}"found it"{}, "key discoveries": ["north leads"]}}"#,
        open.repeat(depth),
        close.repeat(depth)
    )
}

#[test]
fn an_answer_nested_100_000_deep_is_refused_and_the_next_compaction_works() {
    for objects in [false, true] {
        let deep = nested_answer(100_000, objects);
        let rig = Rig::with(
            MemoryStore::new(),
            vec![
                Answer::Verbatim(deep.clone()),
                Answer::Verbatim(deep),
                Answer::Text(valid_summary("north region leads with 91k.")),
            ],
            small_window(),
        );
        grow_session(&rig.logs, &rig.clock, 6, 42);
        let before = rig.dump();
        let err = compact(&rig).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSummary, "{err}");
        assert_eq!(rig.dump(), before, "nothing written");
        let result = compact(&rig).expect("the next compaction works");
        assert!(result.summary.contains("north region leads"));
    }
}
