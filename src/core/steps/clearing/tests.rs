use super::*;
use crate::core::json::read::{from_text, RawJson};
use crate::core::log::iteration::Unit;
use crate::core::log::stored_entry::parse_entries;
use crate::core::order::join::Joined;
use crate::core::order::text_search::TextSearch;

/// Logs of `iterations` iterations, each with a reasoning header, one execution whose result
/// is `result(n)` and one tool entry whose details are `details(n)`.
fn logs(
    iterations: u32,
    result: impl Fn(u32) -> String,
    details: impl Fn(u32) -> String,
) -> LogSnapshot {
    let mut reasoning = Vec::new();
    let mut execution = Vec::new();
    let mut tools = Vec::new();
    for n in 1..=iterations {
        reasoning.push(format!("\"=== ITERATION {n} ===\\nStep {n}.\""));
        execution.push(format!(
            r#"{{"id":"exec_{n}_abc","timestamp":"t","iteration":{n},"success":true,"code":"read({n})","result":{},"error":null,"executionTime":3,"source":"auto","appField":{{"keep":"me"}}}}"#,
            result(n)
        ));
        tools.push(format!(
            r#"{{"id":"tool_{n}_abc","timestamp":"t","iteration":{n},"type":"fetch","action":"get","status":"success","details":{}}}"#,
            details(n)
        ));
    }
    let array = |items: Vec<String>| format!("[{}]", items.joined(","));
    LogSnapshot {
        reasoning: parse_entries("r", Some(&array(reasoning))).unwrap(),
        execution: parse_entries("e", Some(&array(execution))).unwrap(),
        tool_activity: parse_entries("t", Some(&array(tools))).unwrap(),
    }
}

/// A fetched page of about 6,000 characters holding `figure`.
fn page(n: u32, figure: &str) -> String {
    let mut body = format!("<html><head><title>Quarterly report {n}</title></head><body>");
    for i in 0..120 {
        body.push_str(&format!(
            "<p>Row {i}: the region moved as expected this week.</p>"
        ));
    }
    body.push_str(&format!(
        "<p>Total revenue {figure} in sales_q{n}.csv</p></body></html>"
    ));
    let mut json = String::new();
    write_string(&mut json, &body);
    json
}

/// What the tests clear by: the recall tool kept whole, placeholders naming one archive.
fn clearing_by<'a>(
    logs: &'a LogSnapshot,
    placed: &'a PlacedIterations,
    rules: &'a ClearingRules,
) -> Clearing<'a> {
    Clearing {
        logs,
        placed,
        rules,
        keep_whole: &["recall_archived_iterations"],
        archive_key: "gdrs_archived_logs_7",
        unit: Unit::Iteration,
        keep_within: usize::MAX,
    }
}

fn clear_now(logs: &LogSnapshot, rules: &ClearingRules) -> Vec<ClearedEntry> {
    clearable(&clearing_by(logs, &logs.placed_iterations(), rules))
}

/// The value of `field` in the entry `json`, as a `serde_json`-free check: read back by the
/// crate's reader into raw JSON.
fn field_of(json: &str, field: &str) -> String {
    crate::core::json::scan::field(json, field)
        .unwrap()
        .to_owned()
}

#[test]
fn without_keep_iterations_the_newest_keep_their_bodies_while_they_fit_in_keep_within() {
    // Each execution with its page is about 2,000 tokens; the tool entries are small.
    let logs = logs(6, |n| page(n, "9"), |_| "{\"ok\":true}".into());
    let placed = logs.placed_iterations();
    let rules = ClearingRules::default();
    let cleared_with = |keep_within| {
        let clearing = Clearing {
            keep_within,
            ..clearing_by(&logs, &placed, &rules)
        };
        let cleared = clearable(&clearing);
        cleared.iter().map(|c| c.iteration).collect::<Vec<u32>>()
    };
    // The newest always; the next newest while their bodies fit; never more than three.
    assert_eq!(cleared_with(0), [1, 2, 3, 4, 5]);
    assert_eq!(cleared_with(2_500), [1, 2, 3, 4]);
    assert_eq!(cleared_with(5_000), [1, 2, 3]);
    assert_eq!(cleared_with(usize::MAX), [1, 2, 3]);
    // `keepIterations` given is kept to, whatever the tokens.
    let two = ClearingRules {
        keep_iterations: Some(2),
        ..ClearingRules::default()
    };
    let clearing = Clearing {
        keep_within: 0,
        ..clearing_by(&logs, &placed, &two)
    };
    let iterations: Vec<u32> = clearable(&clearing).iter().map(|c| c.iteration).collect();
    assert_eq!(iterations, [1, 2, 3, 4]);
}

#[test]
fn bodies_of_iterations_older_than_the_newest_three_leave_and_the_rest_stay() {
    let logs = logs(
        6,
        |n| page(n, &format!("{n}48,213")),
        |_| "{\"ok\":true}".into(),
    );
    let cleared = clear_now(&logs, &ClearingRules::default());
    // Iteration 6 is the current one: 4, 5 and 6 keep their bodies; 1..3 lose theirs.
    let iterations: Vec<u32> = cleared.iter().map(|c| c.iteration).collect();
    assert_eq!(iterations, [1, 2, 3]);
    assert!(cleared.iter().all(|c| c.log == ClearedLog::Execution));
    for c in &cleared {
        assert!(c.tokens > 1000, "{} frees {}", c.entry_id, c.tokens);
        let result = field_of(&c.placeholder, "result");
        let text = crate::core::json::scan::string(&result).unwrap();
        assert!(text.starts_with(CLEARED_MARK), "{text}");
        let n = c.iteration;
        assert!(text.contains_text(&format!("recall({n})")), "{text}");
        assert!(
            text.ends_with("from gdrs_archived_logs_7]"),
            "its archive: {text}"
        );
        assert!(
            text.contains_text("the recall tool's query of its id"),
            "{text}"
        );
        assert!(
            text.contains_text(&format!("Quarterly report {n}")),
            "the title: {text}"
        );
        assert!(
            text.contains_text(&format!("sales_q{n}.csv")),
            "a file name: {text}"
        );
        assert!(
            text.contains_text(&format!("{n}48213")),
            "the total: {text}"
        );
        // The page's rows are numbered 0..119: a numbered run is not a finding.
        assert!(
            !text.contains_text("101") && !text.contains_text("119"),
            "{text}"
        );
    }
}

#[test]
fn a_placeholder_entry_keeps_every_other_byte_the_app_wrote() {
    let logs = logs(5, |n| page(n, "7"), |_| "null".into());
    let cleared = clear_now(&logs, &ClearingRules::default());
    let original = logs.execution[0].json();
    let c = &cleared[0];
    let body = field_of(original, "result");
    let at = original.find(&body).unwrap();
    assert_eq!(c.placeholder[..at], original[..at]);
    let tail = &original[at + body.len()..];
    assert!(c.placeholder.ends_with(tail), "{}", c.placeholder);
    assert!(tail.contains_text(r#""appField":{"keep":"me"}"#));
    // Still an entry the store reads: its id, iteration and fields in place.
    let read: RawJson = from_text(&c.placeholder).unwrap();
    assert_eq!(field_of(&read.0, "id"), "\"exec_1_abc\"");
    assert_eq!(field_of(&read.0, "iteration"), "1");
}

/// What a clearing of five iterations (execution results arrays, tool bodies `tool_body` of each)
/// chose, and the `details` of its first tool entry's placeholder.
fn cleared_tool_details(tool_body: impl Fn(u32) -> String) -> (Vec<ClearedEntry>, String) {
    let logs = logs(5, |n| format!("[{}]", page(n, "9")), tool_body);
    let cleared = clear_now(&logs, &ClearingRules::default());
    let tool = cleared
        .iter()
        .find(|c| c.log == ClearedLog::ToolActivity)
        .unwrap();
    let details = field_of(&tool.placeholder, "details");
    (cleared, details)
}

#[test]
fn an_object_keeps_its_short_fields_an_array_stays_an_array() {
    let object = |n: u32| {
        format!(
            r#"{{"status":200,"url":"https://example.com/r{n}","body":{}}}"#,
            page(n, "5")
        )
    };
    let (cleared, details) = cleared_tool_details(object);
    assert_eq!(field_of(&details, "status"), "200");
    assert_eq!(field_of(&details, "url"), "\"https://example.com/r1\"");
    let body = crate::core::json::scan::string(&field_of(&details, "body"))
        .unwrap()
        .into_owned();
    assert!(
        body.starts_with(CLEARED_MARK)
            && body.contains_text("recall(1) or the recall tool's query"),
        "{body}"
    );
    let execution = cleared
        .iter()
        .find(|c| c.log == ClearedLog::Execution)
        .unwrap();
    let result = field_of(&execution.placeholder, "result");
    let items: Vec<&str> = items(&result).unwrap().collect();
    assert_eq!(items.len(), 1);
    assert!(items[0].starts_with(&format!("\"{CLEARED_MARK}")));
}

#[test]
fn a_cleared_entry_is_not_cleared_again() {
    let logs = logs(6, |n| page(n, "1"), |_| "null".into());
    let cleared = clear_now(&logs, &ClearingRules::default());
    let mut again = logs.clone();
    for c in &cleared {
        again.execution[c.position] = Stored::from_json_text(&c.placeholder);
    }
    assert_eq!(clear_now(&again, &ClearingRules::default()), []);
}

#[test]
fn small_bodies_errors_and_kept_tools_stay_and_a_cleared_tool_goes_whole() {
    let small = |_| "\"42 rows\"".to_owned();
    // A note of about 250 tokens: under aboveTokens, and more than its placeholders take.
    let note = "short note ".repeat(90);
    let logs = logs(6, small, |n| format!(r#"{{"rows":{n},"note":"{note}"}}"#));
    assert_eq!(clear_now(&logs, &ClearingRules::default()), []);
    let rules = ClearingRules {
        tools: ByName(vec![
            ("fetch".into(), ToolRule::Clear),
            ("auto".into(), ToolRule::Keep),
        ]),
        ..ClearingRules::default()
    };
    // A body smaller than its placeholder would be stays, whatever its tool's rule.
    let tiny = self::logs(6, small, |n| format!(r#"{{"rows":{n}}}"#));
    assert_eq!(clear_now(&tiny, &rules), []);
    let cleared = clear_now(&logs, &rules);
    assert_eq!(cleared.len(), 3);
    assert!(cleared.iter().all(|c| c.log == ClearedLog::ToolActivity));
    let details = field_of(&cleared[0].placeholder, "details");
    assert!(field_of(&details, "rows").contains_text(CLEARED_MARK));
    // A field the app keeps inline stays.
    let rules = ClearingRules {
        keep_fields: ByName(vec![("fetch".into(), vec!["rows".into()])]),
        ..rules
    };
    let details = field_of(&clear_now(&logs, &rules)[0].placeholder, "details");
    assert_eq!(field_of(&details, "rows"), "1");
}

#[test]
fn the_recall_tool_and_entries_a_later_iteration_names_stay_one_iteration_longer() {
    let mut logs = logs(6, |n| page(n, "3"), |n| page(n, "4"));
    // Iteration 4 refers to iteration 3's execution by its id.
    logs.reasoning[3] = Stored::from_json_text("\"=== ITERATION 4 ===\\nAs exec_3_abc showed\"");
    // Iteration 3's tool entry is the recall tool's.
    let recall_tool = logs.tool_activity[2]
        .json()
        .replace("\"fetch\"", "\"recall_archived_iterations\"");
    logs.tool_activity[2] = Stored::from_json_text(&recall_tool);
    let cleared = clear_now(&logs, &ClearingRules::default());
    let ids: Vec<&str> = cleared.iter().map(|c| c.entry_id.as_str()).collect();
    assert_eq!(
        ids,
        ["exec_1_abc", "exec_2_abc", "tool_1_abc", "tool_2_abc"]
    );
}

#[test]
fn restore_puts_the_original_bytes_back_in_place_of_the_placeholders_it_names() {
    let logs = logs(7, |n| page(n, "12.5"), |n| page(n, "77"));
    let cleared = clear_now(&logs, &ClearingRules::default());
    // Iteration 7 is the current one: 5, 6 and 7 keep their bodies.
    assert_eq!(cleared.len(), 8);
    let mut live = apply(&logs, &logs, &cleared).unwrap();
    assert_ne!(live, logs);
    let of = |log: ClearedLog| -> (Vec<usize>, Vec<String>) {
        cleared
            .iter()
            .filter(|entry| entry.log == log)
            .map(|entry| (entry.position, text_hash(Some(&entry.placeholder))))
            .unzip()
    };
    let (positions, hashes) = of(ClearedLog::Execution);
    let originals: Vec<_> = positions
        .iter()
        .map(|&at| logs.execution[at].clone())
        .collect();
    // Placeholders another clearing wrote are not these originals'.
    assert_eq!(
        restore(&mut live.execution, &originals, &["0".repeat(16)]),
        0
    );
    assert_eq!(restore(&mut live.execution, &originals, &hashes), 4);
    let (positions, hashes) = of(ClearedLog::ToolActivity);
    let originals: Vec<_> = positions
        .iter()
        .map(|&at| logs.tool_activity[at].clone())
        .collect();
    assert_eq!(restore(&mut live.tool_activity, &originals, &hashes), 4);
    assert_eq!(live, logs);
}

#[test]
fn apply_keeps_appends_and_refuses_logs_rewritten_meanwhile() {
    let before = logs(6, |n| page(n, "8"), |_| "null".into());
    let cleared = clear_now(&before, &ClearingRules::default());
    let mut now = before.clone();
    let appended = logs(7, |n| page(n, "8"), |_| "null".into());
    now.execution.push(appended.execution[6].clone());
    let after = apply(&before, &now, &cleared).unwrap();
    assert_eq!(after.execution.len(), 7);
    assert_eq!(after.execution[6], now.execution[6]);
    assert!(after.execution[0].json().contains_text(CLEARED_MARK));
    assert_eq!(after.execution[5], now.execution[5]);
    // Another writer rewrote an entry the clearing read: nothing is written.
    let mut rewritten = before.clone();
    rewritten.execution[0] = Stored::from_json_text("{\"id\":\"exec_1_abc\"}");
    assert_eq!(
        apply(&before, &rewritten, &cleared),
        Err(Conflict::Rewritten { log: "execution" })
    );
}

#[test]
fn a_title_is_found_when_the_page_is_not_ascii_where_its_head_ends() {
    // Byte 4096 falls inside a two-byte character: the head is cut before it.
    let mut html = String::from("<html><head><title>Informe régional</title></head><body>x");
    if html.len() % 2 == 0 {
        html.push('x');
    }
    while html.len() < 6000 {
        html.push('é');
    }
    assert!(!html.is_char_boundary(4096));
    assert_eq!(title_of(&html).as_deref(), Some("Informe régional"));
    assert_eq!(title_of("<TITLE> Upper </TITLE>").as_deref(), Some("Upper"));
    assert_eq!(
        title_of("notes\n# Heading one\nbody").as_deref(),
        Some("Heading one")
    );
}

#[test]
fn a_tables_cells_are_not_kept_as_findings() {
    // Sixty weekly rows: their counts are three-digit numbers, none a finding of its own.
    let table = |n: u32| {
        let rows: Vec<String> = (0..60)
            .map(|i| {
                format!(
                    r#"{{"week":{},"orders":{},"region":{n}}}"#,
                    i + 1,
                    (n * 31 + i * 17) % 800 + 100
                )
            })
            .collect();
        format!("[{}]", rows.joined(","))
    };
    let logs = logs(5, table, |_| "null".into());
    let cleared = clear_now(&logs, &ClearingRules::default());
    assert!(!cleared.is_empty());
    for c in &cleared {
        assert!(!c.placeholder.contains_text("holds"), "{}", c.placeholder);
    }
}

#[test]
fn a_choice_made_a_slice_at_a_time_is_the_choice_made_at_once() {
    // Later iterations name earlier ids (kept one iteration longer), bodies big and small.
    let logs = logs(
        9,
        |n| match n % 3 {
            0 => "{\"ok\":true}".into(),
            _ => page(n, &format!("{n}7,500 per exec_{}_abc", n.saturating_sub(1))),
        },
        |n| page(n, "12,000"),
    );
    let placed = logs.placed_iterations();
    let rules = ClearingRules::default();
    let at_once = clear_now(&logs, &rules);
    assert!(at_once.len() >= 6, "{} cleared", at_once.len());
    let clearing = clearing_by(&logs, &placed, &rules);
    for bytes in [1, 100, 5_000, 40_000] {
        let mut choice = ClearingChoice::of(&logs);
        let mut slices = 1;
        while !choice.advance(&clearing, bytes) {
            slices += 1;
            assert!(slices < 1_000, "a slice of {bytes} bytes reads something");
        }
        assert_eq!(choice.cleared, at_once, "slices of {bytes} bytes");
        assert!(
            bytes >= 40_000 || slices > 2,
            "{slices} slices of {bytes} bytes"
        );
    }
}

#[test]
fn every_placeholder_says_its_iteration_and_archive_back() {
    let titled = "<html><head><title>see recall(3) brings it back from x]</title></head>";
    let bodies = [page(12, "7444.2"), titled.repeat(40), "[1, 2]".repeat(300)];
    let mut log = String::from("[");
    for (k, body) in bodies.iter().enumerate() {
        let how = Recovery {
            iteration: 12 + k as u32,
            id: if k == 0 { "" } else { "exec_1" },
            archive_key: "gdrs_archived_logs_1795373767000",
            rule: [
                None,
                Some(ToolRule::Replayable),
                Some(ToolRule::NonReplayable),
            ][k],
            unit: [Unit::Iteration, Unit::Turn, Unit::Iteration][k],
        };
        let mut quoted = String::new();
        write_string(&mut quoted, &placeholder_text(&format!("{body:?}"), &how));
        log.push_str(&format!("{{\"result\":{quoted}}},"));
    }
    let sources: Vec<(u32, &str)> = placeholder_sources(&log).collect();
    let key = "gdrs_archived_logs_1795373767000";
    assert_eq!(sources, [(12, key), (13, key), (14, key)]);
    assert_eq!(placeholder_sources("no placeholder here").count(), 0);
}

#[test]
fn a_body_that_quotes_the_placeholder_prefix_is_cleared_like_any_other() {
    // A fetched page about this package quotes how a placeholder begins; it is no placeholder.
    let quoting = |n| {
        let text = format!("{CLEARED_MARK}is how the package's placeholders begin. ");
        page(n, &text)
    };
    let logs = logs(6, quoting, |_| "null".into());
    let cleared = clear_now(&logs, &ClearingRules::default());
    assert_eq!(cleared.len(), 3, "iterations 1–3, as any page");
}

#[test]
fn each_durability_class_clears_as_it_says_and_its_placeholder_tells_the_model() {
    // Four tools, one per class, each returning a page of about 250 tokens (under aboveTokens)
    // with a short `rows` field.
    let note = "short note ".repeat(90);
    let body = |n: u32| format!(r#"{{"rows":{n},"note":"{note}"}}"#);
    let logs_of = |tool: &str| {
        let logs = logs(6, |_| "\"42 rows\"".to_owned(), body);
        let mut renamed = logs.clone();
        for entry in &mut renamed.tool_activity {
            *entry =
                Stored::from_json_text(&entry.json().replace("\"fetch\"", &format!("\"{tool}\"")));
        }
        renamed
    };
    let rules = ClearingRules {
        tools: ByName(vec![
            ("status".into(), ToolRule::Ephemeral),
            ("db".into(), ToolRule::Anchoring),
            ("search".into(), ToolRule::Replayable),
            ("payment".into(), ToolRule::NonReplayable),
        ]),
        keep_fields: ByName(vec![("db".into(), vec!["rows".into()])]),
        ..ClearingRules::default()
    };
    // Whole whatever the size: ephemeral and replayable; by size: anchoring, non-replayable.
    assert_eq!(clear_now(&logs_of("status"), &rules).len(), 3);
    let replayed = clear_now(&logs_of("search"), &rules);
    assert_eq!(replayed.len(), 3);
    assert!(replayed[0]
        .placeholder
        .contains_text("the call can be made again. recall(1)"));
    assert_eq!(clear_now(&logs_of("db"), &rules), []);
    assert_eq!(clear_now(&logs_of("payment"), &rules), []);
    let small = ClearingRules {
        above_tokens: 100,
        ..rules
    };
    let anchored = clear_now(&logs_of("db"), &small);
    assert_eq!(
        field_of(&field_of(&anchored[0].placeholder, "details"), "rows"),
        "1"
    );
    let only = clear_now(&logs_of("payment"), &small);
    assert!(only[0]
        .placeholder
        .contains_text("the archive holds the only copy. recall(1)"));
    // The placeholder still names its archive where a recall follows it.
    let sources: Vec<(u32, &str)> = placeholder_sources(&only[0].placeholder).collect();
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0].0, 1);
}

#[test]
fn an_array_of_typed_parts_becomes_one_text_part() {
    let parts = |n: u32| {
        format!(
            r#"[{{"type":"text","text":{}}},{{"type":"text","text":"more {n}"}}]"#,
            page(n, "5")
        )
    };
    let (_, details) = cleared_tool_details(parts);
    let items: Vec<&str> = items(&details).unwrap().collect();
    assert_eq!(items.len(), 1, "{details}");
    assert_eq!(field_of(items[0], "type"), "\"text\"");
    assert!(field_of(items[0], "text").starts_with(&format!("\"{CLEARED_MARK}")));
}
