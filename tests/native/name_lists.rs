//! Each list of names the JavaScript side sees is written in Rust once (a record's table, an
//! enum's names) and once in `src/web/types.d.ts`, and `REQUIRED_SECTIONS` once more in the
//! build script that appends the constant: this test fails when any two of them disagree, so
//! a field renamed on one side only fails here.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeSet;

use context_compactor::core::error::ErrorCode;
use context_compactor::core::json::read::from_text;
use context_compactor::core::json::record::Record;
use context_compactor::core::json::write::{to_json, ToJson};
use context_compactor::core::log::reasoning_entry::ReasoningEntry;
use context_compactor::core::messages::report::{ClearedCall, MessagePlan, MessageReport};
use context_compactor::core::messages::shape::Shape;
use context_compactor::core::model::call_options::{
    CanCompact, CompactOptions, LogStoreOptions, PROMPT_TOKENS_OPTION, PROVIDER_OPTION,
    SIGNAL_OPTION,
};
use context_compactor::core::model::clearing::{ClearedBody, ClearingRules, ToolRule};
use context_compactor::core::model::facts::{
    Coverage, Demoted, Fact, IndexLine, Injection, Pin, UnverifiedLine,
};
use context_compactor::core::model::fallback::FallbackReason;
use context_compactor::core::model::outcome::{
    CompactionPlan, CompactionResult, EntryCounts, Wait,
};
use context_compactor::core::model::phase::Phase;
use context_compactor::core::model::reasons::RetryReason;
use context_compactor::core::model::set_aside::SetAside;
use context_compactor::core::model::settings::{CompactorSettings, Trigger};
use context_compactor::core::model::token_usage::TokenUsage;
use context_compactor::core::ports::events::CompactionEvent;
use context_compactor::core::providers::port::GenerationSettings;
use context_compactor::core::steps::selection::PerEntry;
use context_compactor::core::steps::validation::Validation;
use context_compactor::core::steps::validation::REQUIRED_SECTIONS;
use context_compactor::core::store::archive_record::{
    Archive, ArchiveData, ArchiveInfo, ArchiveMetadata,
};
use context_compactor::core::store::metrics::{CompactionCost, CompactionMetrics};
use context_compactor::core::store::recall_tool::RecallArgs;
use context_compactor::core::store::rehydrate::Rehydrated;

const TYPESCRIPT: &str = include_str!("../../src/web/types.d.ts");
const MERGE_SCRIPT: &str = include_str!("../../scripts/merge-pkg.mjs");

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
fn tool_rules_and_message_shapes_read_the_same_in_rust_and_typescript() {
    assert_eq!(
        ts_union("ToolRule"),
        set(ToolRule::ALL.map(ToolRule::as_str))
    );
    assert_eq!(ts_union("MessageShape"), set(Shape::ALL.map(Shape::as_str)));
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

/// The body of `export interface <name> …{ … }` and what it extends, comments removed.
fn ts_interface(name: &str) -> (String, String) {
    let start = TYPESCRIPT
        .find(&format!("export interface {name} "))
        .or_else(|| TYPESCRIPT.find(&format!("export interface {name}<")))
        .unwrap_or_else(|| panic!("no interface {name} in types.d.ts"));
    let rest = &TYPESCRIPT[start..];
    let open = rest.find('{').expect("an interface has a body");
    let head = rest[..open].to_owned();
    let mut depth = 0;
    let mut end = open;
    for (i, c) in rest[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            end = open + i;
            break;
        }
    }
    (head, without_comments(&rest[open + 1..end]))
}

fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let close = rest[start..].find("*/").expect("a comment ends") + start + 2;
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// The property names an interface declares (not its methods or index signatures), with those
/// of the interface it extends through `Omit<Base, "a" | …>` less the omitted ones.
fn ts_keys(name: &str) -> BTreeSet<String> {
    let (head, body) = ts_interface(name);
    let mut keys: BTreeSet<String> = members(&body).iter().filter_map(|m| property(m)).collect();
    if let Some(omit) = head.split("extends Omit<").nth(1) {
        let base = omit.split(',').next().expect("Omit<Base, …>").trim();
        let omitted = set(omit.split('"').skip(1).step_by(2));
        keys.extend(ts_keys(base).difference(&omitted).cloned());
    }
    keys
}

/// The members of an object type's body: its text split at `;` and line ends outside brackets.
fn members(body: &str) -> Vec<String> {
    let mut members = Vec::new();
    let mut depth = 0i32;
    let mut segment = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '=' if chars.peek() == Some(&'>') => {
                chars.next();
                segment.push_str("=>");
                continue;
            }
            '{' | '(' | '[' | '<' => depth += 1,
            '}' | ')' | ']' | '>' => depth -= 1,
            ';' | '\n' if depth == 0 => {
                members.push(std::mem::take(&mut segment));
                continue;
            }
            _ => {}
        }
        segment.push(c);
    }
    members.push(segment);
    members
}

fn property(segment: &str) -> Option<String> {
    let segment = segment.trim().trim_start_matches("readonly ");
    let name: String = segment
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    let after = segment[name.len()..].trim_start();
    (!name.is_empty() && (after.starts_with(':') || after.starts_with("?:"))).then_some(name)
}

/// The keys of the object `value` is written as, read back by serde_json.
fn written_keys(value: &impl ToJson) -> BTreeSet<String> {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&to_json(value))
        .expect("a record is written as a JSON object")
        .keys()
        .cloned()
        .collect()
}

fn assert_same_keys(interface: &str, rust: &[&str], javascript_only: &[&str]) {
    let mut expected = set(rust.iter().copied());
    expected.extend(set(javascript_only.iter().copied()));
    let declared = ts_keys(interface);
    assert_eq!(
        declared,
        expected,
        "interface {interface} in types.d.ts and its Rust table differ: only in TypeScript \
         {:?}, only in Rust {:?}",
        declared.difference(&expected).collect::<Vec<_>>(),
        expected.difference(&declared).collect::<Vec<_>>(),
    );
}

#[test]
fn every_interface_of_a_record_has_the_fields_its_rust_table_writes_and_reads() {
    assert_same_keys("Fact", Fact::FIELDS, &[]);
    assert_same_keys("Pin", Pin::FIELDS, &[]);
    assert_same_keys("ReasoningEntry", ReasoningEntry::FIELDS, &[]);
    assert_same_keys("Coverage", Coverage::FIELDS, &[]);
    assert_same_keys("UnverifiedLine", UnverifiedLine::FIELDS, &[]);
    assert_same_keys("DemotedFact", Demoted::FIELDS, &[]);
    assert_same_keys("IndexLine", IndexLine::FIELDS, &[]);
    assert_same_keys("Injection", Injection::FIELDS, &[]);
    assert_same_keys("TokenUsage", TokenUsage::FIELDS, &[]);
    assert_same_keys("CompactionResult", CompactionResult::FIELDS, &[]);
    assert_same_keys("CompactionPlan", CompactionPlan::FIELDS, &[]);
    assert_same_keys("EntryCounts", EntryCounts::FIELDS, &[]);
    assert_same_keys("ArchiveData", ArchiveData::FIELDS, &[]);
    assert_same_keys("ArchiveMetadata", ArchiveMetadata::FIELDS, &[]);
    assert_same_keys("PerEntry", PerEntry::<u32>::FIELDS, &[]);
    assert_same_keys("Archive", Archive::<ArchiveData>::FIELDS, &[]);
    assert_same_keys("ArchiveInfo", ArchiveInfo::FIELDS, &[]);
    assert_same_keys("CompactionMetrics", CompactionMetrics::FIELDS, &[]);
    assert_same_keys("CompactionCost", CompactionCost::FIELDS, &[]);
    assert_same_keys("Rehydrated", Rehydrated::FIELDS, &[]);
    assert_same_keys("RecallToolArgs", RecallArgs::FIELDS, &[]);
    assert_same_keys("ValidationResult", Validation::FIELDS, &[]);
    assert_same_keys("CanCompactResult", CanCompact::FIELDS, &[]);
    assert_same_keys("LogStoreOptions", LogStoreOptions::FIELDS, &[]);
    // The web layer adds the abort signal to what a provider or a compaction is given.
    assert_same_keys(
        "GenerationSettings",
        GenerationSettings::FIELDS,
        &[SIGNAL_OPTION],
    );
    assert_same_keys("CompactOptions", CompactOptions::FIELDS, &[SIGNAL_OPTION]);
    assert_same_keys("ClearingOptions", ClearingRules::FIELDS, &[]);
    assert_same_keys("ClearedBody", ClearedBody::FIELDS, &[]);
    assert_same_keys("ClearedCall", ClearedCall::FIELDS, &[]);
    assert_same_keys("MessagePlan", MessagePlan::FIELDS, &[]);
    // The web layer adds the list to send.
    assert_same_keys("MessageCompaction", MessageReport::FIELDS, &["messages"]);
    // The web layer takes the provider and the app's own token count out before the settings
    // are read (src/web/compactor.rs).
    assert_same_keys(
        "CompactorOptions",
        CompactorSettings::FIELDS,
        &[PROVIDER_OPTION, PROMPT_TOKENS_OPTION],
    );
}

#[test]
fn an_iteration_wait_is_written_with_the_fields_typescript_declares() {
    let wait = Wait {
        iteration: 4,
        running_here: true,
        triggers: vec![Trigger::User],
    };
    assert_eq!(ts_keys("IterationWait"), written_keys(&wait));
}

#[test]
fn the_key_reader_sees_a_renamed_field_on_either_side() {
    // What the two tests above rest on: a property, an optional one, a method, an index
    // signature, a nested object and a function type in one body.
    let keys = ts_keys("ExecutionEntry");
    assert!(
        keys.contains("executionTime") && keys.contains("result"),
        "{keys:?}"
    );
    assert!(
        !keys.contains("field") && !keys.contains("message"),
        "{keys:?}"
    );
    assert!(ts_keys("LogStore").is_empty(), "a method is not a field");
    assert!(ts_keys("GenerationSettings").contains("signal"));
}

#[test]
fn every_event_detail_has_the_fields_its_typescript_map_declares() {
    let result: CompactionResult = from_text(
        r#"{"iterations":[1,4],"tokensBefore":900,"tokensAfter":300,"tokensSaved":600,"reduction":0.6,"contextUsageBefore":0.9,"contextUsageAfter":0.3,"attempts":1,"durationMs":12,"archiveKey":"k","summary":"S","usage":null}"#,
    )
    .unwrap();
    let events = [
        CompactionEvent::Start {
            trigger: Trigger::User,
            iteration: 4,
            context_usage: 0.9,
        },
        CompactionEvent::PhaseChange {
            phase: Phase::Gathering,
            previous: Phase::Freezing,
        },
        CompactionEvent::Progress {
            phase: Phase::Compacting,
            percent: 40,
            message: "m".into(),
            elapsed_ms: 1.0,
        },
        CompactionEvent::Archived {
            archive_key: "k".into(),
            timestamp: 1,
        },
        CompactionEvent::Complete {
            result: Box::new(result),
        },
        CompactionEvent::Error {
            code: "busy",
            message: "m".into(),
            phase: Phase::Error,
        },
        CompactionEvent::Retry {
            reason: "timeout".into(),
            attempt: 2,
            wait_ms: 10,
            message: "m".into(),
        },
        CompactionEvent::RolledBack {
            archive_key: "k".into(),
        },
        CompactionEvent::ArchivesLost {
            keys: vec!["k".into()],
        },
        CompactionEvent::SetAside(SetAside {
            key: "k".into(),
            kept_as: Some("k_corrupt".into()),
            reason: "r".into(),
        }),
        CompactionEvent::StoragePressure {
            usage: 850.0,
            quota: 1000.0,
            share: 0.85,
            purged: vec!["k".into()],
        },
        CompactionEvent::Fallback {
            reason: FallbackReason {
                code: "llm_http".into(),
                message: "m".into(),
            },
        },
        CompactionEvent::UserItemsOverBudget {
            tokens: 900,
            budget: 800,
            message: "m".into(),
        },
    ];
    let (_, map) = ts_interface("CompactorEventMap");
    let declared: Vec<(String, BTreeSet<String>)> = members(&map)
        .iter()
        .filter_map(|member| {
            let name = property(member)?;
            let inner = &member[member.find('{')? + 1..member.rfind('}')?];
            Some((
                name,
                members(inner).iter().filter_map(|m| property(m)).collect(),
            ))
        })
        .collect();
    assert_eq!(
        set(declared.iter().map(|(name, _)| name.as_str())),
        set(events.iter().map(CompactionEvent::name)),
    );
    for event in &events {
        let written = written_keys(event);
        let (_, keys) = declared
            .iter()
            .find(|(name, _)| name == event.name())
            .unwrap();
        assert_eq!(&written, keys, "{}", event.name());
    }
}

/// The doc comment and the type of the option `name` in `interface` (one line each).
fn option_in_typescript(interface: &str, name: &str) -> Option<(String, String)> {
    let start = TYPESCRIPT.find(&format!("export interface {interface} "))?;
    let body = &TYPESCRIPT[start..];
    let body = &body[..body.find("\n}")?];
    let line = body
        .lines()
        .find(|line| line.contains(&format!(" {name}?:")))?;
    let doc = line
        .split("/**")
        .nth(1)?
        .split("*/")
        .next()?
        .trim()
        .to_owned();
    let ts_type = line.split(&format!(" {name}?:")).nth(1)?;
    Some((doc, ts_type.trim().trim_end_matches(';').to_owned()))
}

#[test]
fn every_option_row_is_declared_in_typescript_with_its_type_default_and_range() {
    let rows = CompactorSettings::rows();
    assert_eq!(
        rows.iter().map(|row| row.name).collect::<Vec<_>>(),
        CompactorSettings::FIELDS,
        "the rows are the options the reader takes"
    );
    for row in rows {
        let (doc, ts_type) = option_in_typescript("CompactorOptions", row.name)
            .unwrap_or_else(|| panic!("CompactorOptions in types.d.ts lacks {}", row.name));
        // `ArchivesOptions` repeats the archive options, with the same type and default.
        if let Some((archives_doc, archives_type)) =
            option_in_typescript("ArchivesOptions", row.name)
        {
            assert_eq!(
                archives_type, row.ts_type,
                "ArchivesOptions.{}: its type",
                row.name
            );
            let shown = archives_doc.split("@default ").nth(1).map(str::trim);
            assert_eq!(
                shown,
                Some(row.default.as_str()),
                "ArchivesOptions.{}",
                row.name
            );
        }
        assert_eq!(ts_type, row.ts_type, "{}: its type", row.name);
        let default = doc.split("@default ").nth(1).map(str::trim);
        match row.default.as_str() {
            "none" => assert_eq!(default, None, "{}: no default", row.name),
            shown => assert_eq!(default, Some(shown), "{}: its default", row.name),
        }
        if !row.range.is_empty() {
            let range = format!("Range: {}.", row.range);
            assert!(
                doc.contains(&range),
                "{}: its doc lacks {range:?}",
                row.name
            );
        }
    }
}

/// The docs that show the options' table, drawn from the rows after this marker line.
const OPTION_TABLES: [&str; 1] = ["docs/npm-README.md"];
const OPTIONS_MARKER: &str =
    "<!-- options: drawn from the rows of CompactorSettings (src/core/model/settings.rs) -->\n";

#[test]
fn the_docs_table_of_options_is_drawn_from_the_rows() {
    let table =
        context_compactor::core::model::option_rows::options_table(&CompactorSettings::rows());
    for doc in OPTION_TABLES {
        let path = format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text
            .find(OPTIONS_MARKER)
            .unwrap_or_else(|| panic!("{doc} lacks the options marker"))
            + OPTIONS_MARKER.len();
        let end = text[start..]
            .find("\n\n")
            .map_or(text.len(), |end| start + end + 1);
        if std::env::var_os("DRAW_OPTIONS").is_some() {
            std::fs::write(&path, format!("{}{table}{}", &text[..start], &text[end..])).unwrap();
            continue;
        }
        assert_eq!(
            &text[start..end],
            table,
            "{doc}: the options' table differs from the rows (DRAW_OPTIONS=1 cargo test \
             --test name_lists redraws it)"
        );
    }
}

#[test]
fn the_entry_interfaces_have_the_fields_the_store_reads_and_writes() {
    use context_compactor::core::log::entries::{Part, STAMPED_FIELDS};
    let execution = Part::EXECUTION.map(Part::name);
    let tool = Part::TOOL_ACTIVITY.map(Part::name);
    assert_eq!(execution, Part::EXECUTION_NAMES);
    assert_eq!(tool, Part::TOOL_ACTIVITY_NAMES);
    assert_same_keys("ExecutionInput", &execution, &[]);
    assert_same_keys("ToolActivityInput", &tool, &[]);
    assert_same_keys("ExecutionEntry", &execution, &STAMPED_FIELDS);
    assert_same_keys("ToolActivityEntry", &tool, &STAMPED_FIELDS);
    // What an append writes is what the interface declares (every field given).
    let memory = context_compactor::core::ports::storage::MemoryStore::new();
    let clock = context_compactor::core::ports::clock::ManualClock::new(1_795_373_767_000.0);
    let mut logs = context_compactor::core::store::log_store::LogStore::new(
        memory.clone(),
        clock,
        context_compactor::core::store::keys::StorageKeys::default(),
        3,
    );
    let execution_input: context_compactor::core::log::entries::ExecutionInput = from_text(
        r#"{"success":true,"code":"1","result":1,"error":null,"executionTime":3,"source":"auto","metadata":{}}"#,
    )
    .unwrap();
    let tool_input: context_compactor::core::log::entries::ToolActivityInput =
        from_text(r#"{"type":"t","action":"a","status":"ok","details":{}}"#).unwrap();
    logs.append_execution(execution_input).unwrap();
    logs.append_tool_activity(tool_input).unwrap();
    let stored = |key: &str| -> BTreeSet<String> {
        let text = context_compactor::core::ports::storage::KeyValueStore::get(&memory, key)
            .unwrap()
            .unwrap();
        let entries: Vec<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(&text).unwrap();
        entries[0].keys().cloned().collect()
    };
    assert_eq!(stored("gdrs_execution_log"), ts_keys("ExecutionEntry"));
    assert_eq!(
        stored("gdrs_tool_activity_log"),
        ts_keys("ToolActivityEntry")
    );
}

#[test]
fn the_docs_tables_of_errors_name_every_code_and_no_other() {
    for doc in OPTION_TABLES {
        let text =
            std::fs::read_to_string(format!("{}/{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let start = text
            .find("\n## Errors\n")
            .unwrap_or_else(|| panic!("{doc} has no Errors section"));
        let section = &text[start + 1..];
        let section = &section[..section[1..]
            .find("\n## ")
            .map_or(section.len(), |end| end + 1)];
        let named: BTreeSet<String> = section
            .lines()
            .filter(|line| line.starts_with("| `"))
            .flat_map(|line| {
                let first = line.split('|').nth(1).unwrap_or_default();
                first
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(
            named,
            set(ErrorCode::ALL.map(ErrorCode::as_str)),
            "{doc}: the table of error codes"
        );
    }
}
