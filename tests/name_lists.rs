//! Each list of names the JavaScript side sees is written in Rust once (`as_str`, the JSON written and read) and
//! once in the TypeScript text of the `.d.ts`, and `REQUIRED_SECTIONS` once more in the build
//! script that appends the constant: this test fails when any two of them disagree.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeSet;

use context_compactor::core::error::ErrorCode;
use context_compactor::core::json::read::from_text;
use context_compactor::core::json::write::to_json;
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::reasons::RetryReason;
use context_compactor::core::model::settings::Trigger;
use context_compactor::core::steps::validation::REQUIRED_SECTIONS;

const TYPESCRIPT: &str = include_str!("../src/web/typescript.rs");
const MERGE_SCRIPT: &str = include_str!("../scripts/merge-pkg.mjs");

/// The string literals of `export type <name> = "a" | "b" …;` in the TypeScript text.
fn ts_union(name: &str) -> BTreeSet<String> {
    let start = TYPESCRIPT
        .find(&format!("export type {name} ="))
        .unwrap_or_else(|| panic!("no union {name} in the TypeScript text"));
    let body = &TYPESCRIPT[start..];
    let body = &body[..body.find(';').expect("the union ends with ;")];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn set<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(str::to_owned).collect()
}

#[test]
fn phases_read_the_same_in_json_as_str_and_typescript() {
    for phase in Phase::ALL {
        assert_eq!(to_json(&phase), format!("\"{}\"", phase.as_str()));
    }
    assert_eq!(ts_union("Phase"), set(Phase::ALL.map(Phase::as_str)));
}

#[test]
fn triggers_read_the_same_in_json_as_str_and_typescript() {
    for trigger in Trigger::ALL {
        assert_eq!(to_json(&trigger), format!("\"{}\"", trigger.as_str()));
        let parsed: Trigger = from_text(&to_json(trigger.as_str())).unwrap();
        assert_eq!(parsed, trigger);
    }
    assert_eq!(ts_union("Trigger"), set(Trigger::ALL.map(Trigger::as_str)));
}

#[test]
fn retry_reasons_read_the_same_in_rust_and_typescript() {
    let names: Vec<String> = RetryReason::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        ts_union("RetryReason"),
        set(names.iter().map(String::as_str))
    );
}

#[test]
fn error_codes_read_the_same_in_as_str_and_typescript() {
    assert_eq!(
        ts_union("ErrorCode"),
        set(ErrorCode::ALL.map(ErrorCode::as_str))
    );
}

#[test]
fn the_build_script_appends_the_required_sections_of_the_core() {
    let start = MERGE_SCRIPT
        .find("const SECTIONS = [")
        .expect("merge-pkg.mjs lists SECTIONS");
    let list = &MERGE_SCRIPT[start..];
    let list = &list[..list.find(']').unwrap()];
    let sections: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
    assert_eq!(sections, REQUIRED_SECTIONS);
}
