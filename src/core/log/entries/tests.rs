use super::*;
use crate::core::json::read::from_text;

fn execution(text: &str) -> Stored<ExecutionEntry> {
    Stored::from_json_text(text)
}

#[test]
fn execution_fields_are_read_leniently() {
    let entry = execution(
        r#"{"id":"exec_1_a","success":true,"code":"1+1","result":1.1805916207174113e+21,"context":{"iteration":4},"metadata":{"task":"sum"}}"#,
    );
    assert_eq!(entry.stated_iteration(), Some(4));
    assert_eq!(entry.facts.id.as_deref(), Some("exec_1_a"));
    assert_eq!(entry.fields().result_json(), Some("1.1805916207174113e+21"));
    assert_eq!(entry.fields().task().as_deref(), Some("sum"));
    let odd = execution(r#"{"id":7,"success":"yes","code":null,"iteration":"3"}"#);
    assert_eq!(odd.facts.id.as_deref(), Some("7"));
    assert_eq!(odd.fields().success(), None);
    assert_eq!(odd.fields().code(), "");
    assert_eq!(odd.stated_iteration(), Some(3));
}

#[test]
fn facts_are_read_like_json_parse_reads_them() {
    let dup = execution(r#"{"id":"a","iteration":1,"id":"b","iteration":2,"x":[{"id":9}]}"#);
    assert_eq!(dup.facts.id.as_deref(), Some("b"));
    assert_eq!(dup.stated_iteration(), Some(2));
    let invalid = execution(r#"{"iteration":"soon","context":{"iteration":6}}"#);
    assert_eq!(invalid.stated_iteration(), Some(6));
    let odd_context = execution(r#"{"context":[1],"timestamp":5}"#);
    assert_eq!(odd_context.stated_iteration(), None);
    assert_eq!(odd_context.facts.timestamp.as_deref(), Some("5"));
    let lone = execution(r#"{"id":"exec_\ud83d","context":{"iteration":"4"}}"#);
    assert_eq!(lone.facts.id.as_deref(), Some("exec_\u{fffd}"));
    assert_eq!(lone.stated_iteration(), Some(4));
    assert!(!lone.facts.has_iteration);
    let vault = ToolActivityEntry::read(r#"{"type":"vault","action":"read","id":"v"}"#);
    assert!(vault.facts.vault_read);
    assert_eq!(execution("[1]").facts, EntryFacts::default());
}

#[test]
fn explicit_iteration_wins_over_context() {
    let entry = execution(r#"{"iteration":2,"context":{"iteration":9}}"#);
    assert_eq!(entry.stated_iteration(), Some(2));
}

#[test]
fn error_message_reads_objects_and_strings() {
    assert_eq!(
        execution(r#"{"error":{"message":"boom"}}"#)
            .fields()
            .error_message()
            .as_deref(),
        Some("boom")
    );
    assert_eq!(
        execution(r#"{"error":"bang"}"#)
            .fields()
            .error_message()
            .as_deref(),
        Some("bang")
    );
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    assert_eq!(js_number(3.0).get(), "3");
    assert_eq!(js_number(2.5).get(), "2.5");
    assert_eq!(js_number(-0.0).get(), "0");
    assert_eq!(js_number(f64::NAN).get(), "0");
}

#[test]
fn stamped_fields_of_an_input_give_way() {
    let input: ExecutionInput = from_text(
        r#"{"success":true,"code":"x","id":"old","keep":{"b":1, "a":2},"iteration":9,"keep":[1]}"#,
    )
    .unwrap();
    assert_eq!(input.extra.len(), 1);
    assert_eq!(
        (input.extra[0].0.as_str(), input.extra[0].1.get()),
        ("keep", "[1]")
    );
}
