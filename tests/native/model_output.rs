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
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
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

/// A long answer with the six sections, naming ids and figures of many shapes (`seed` varies
/// them), far over any target: the package cuts it.
fn long_answer(seed: u64) -> String {
    let mut rng = Seeded::new(seed);
    let mut lines = valid_summary("the totals per region");
    for i in 0..40 {
        let id = match rng.next(5) {
            0 => format!("exec_{:x}_{}", rng.next(1 << 40), rng.next(999)),
            1 => format!("shard-{}-{}.parquet", rng.next(90_000), i),
            2 => format!(
                "https://api.example.test/v{}/rows?page={}",
                rng.next(9),
                rng.next(5000)
            ),
            3 => format!("{}.{}", rng.next(1_000_000), rng.next(99)),
            _ => format!("ORD{:08}", rng.next(100_000_000)),
        };
        lines.push_str(&format!(
            "\n- Compared {id} with the reference: {} rows, {}% matched on 2026-0{}-1{}.",
            rng.next(90_000),
            rng.next(100),
            1 + rng.next(8),
            rng.next(9)
        ));
    }
    // Short lines last: the cut lands within a token of its target.
    for i in 0..200 {
        lines.push_str(if i % 2 == 0 { "\n- ok" } else { "\n- done" });
    }
    lines
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn a_summary_cut_to_its_target_always_passes_the_size_rule() {
    let mut refused = Vec::new();
    for round in 0..1_000u64 {
        let rig = Rig::with(
            MemoryStore::new(),
            vec![Answer::Verbatim(long_answer(round)); 2],
            Default::default(),
        );
        grow_session(&rig.logs, &rig.clock, 3 + (round % 9) as u32, round);
        match run_ready(rig.compactor.compact(Trigger::ContextLimitError)) {
            Some(Ok(_)) => {}
            Some(Err(err)) if err.to_string().contains("not clearly smaller") => {
                refused.push((round, err.to_string()))
            }
            Some(Err(err)) => panic!("round {round}: {err}"),
            None => panic!("round {round} waited on nothing"),
        }
    }
    assert!(
        refused.is_empty(),
        "{} of 1000: {:?}",
        refused.len(),
        refused.first()
    );
}

#[test]
#[ignore = "a whole session, slow unoptimised: scripts/test.sh runs it optimised"]
fn the_result_lists_only_the_marked_lines_the_stored_summary_holds() {
    // 2,000 lines naming figures no source holds, far over a 300-token budget: most are cut.
    let mut answer = valid_summary("the totals per region");
    for i in 0..2_000 {
        answer.push_str(&format!(
            "\n- Shard {} held {} rows.",
            70_000 + i,
            900_000 + i
        ));
    }
    let settings = context_compactor::core::model::settings::CompactorSettings {
        summary_budget_tokens: Some(300),
        ..small_window()
    };
    let rig = Rig::with(MemoryStore::new(), vec![Answer::Verbatim(answer)], settings);
    grow_session(&rig.logs, &rig.clock, 6, 42);
    let result = compact(&rig).unwrap();
    assert!(result.unverified.len() < 50, "{}", result.unverified.len());
    for line in &result.unverified {
        assert!(
            result
                .summary
                .contains(&format!("{} [unverified]", line.line)),
            "{}",
            line.line
        );
    }
}
