use super::*;
use crate::core::steps::terms::identifiers_in;

#[test]
fn identifiers_are_ids_files_urls_and_long_numbers() {
    let text = "Loaded sales_2026.csv (88,469 rows) from https://data.example/x.csv, \
                run exec_mwst50qw_oqbgqb81 took 12 ms; vault:report-7a2f ok; see notes/step-3.md.";
    assert_eq!(
        identifiers_in(text),
        vec![
            "sales_2026.csv",
            "88469",
            "https://data.example/x.csv",
            "exec_mwst50qw_oqbgqb81",
            "report-7a2f",
            "notes/step-3.md"
        ]
    );
    assert!(identifiers_in("the year 12 and 2026-01-01, v1.2, a follow-up").is_empty());
    assert_eq!(
        identifiers_in("read vault supplier_notes"),
        vec!["supplier_notes"]
    );
}

#[test]
fn numbers_count_whatever_their_digit_grouping() {
    let fact = Fact {
        id: "result:x".into(),
        kind: FactKind::Result,
        text: "Result: 3125206".into(),
        exact: vec!["3125206".into(), "41.8".into()],
        words: Vec::new(),
        iterations: None,
    };
    assert!(fact.kept_in(&Normalised::of("north leads with 3,125,206 (41.8%)")));
    assert!(!fact.kept_in(&Normalised::of("north leads with 3,125,207 (41.8%)")));
}

#[test]
fn text_facts_need_half_their_key_words() {
    let fact = Fact::text_fact(
        "pin:1".into(),
        FactKind::Pin,
        "Report amounts in euros, never dollars".into(),
        "Report amounts in euros, never dollars",
    );
    assert_eq!(
        fact.words,
        vec!["report", "amounts", "euros", "never", "dollars"]
    );
    assert!(fact.kept_in(&Normalised::of(
        "- Amounts are reported in euros, never in dollars."
    )));
    assert!(!fact.kept_in(&Normalised::of("- Amounts are shown in the report.")));
}

#[test]
fn a_pin_is_kept_only_by_a_line_that_holds_all_its_words_and_values() {
    let content = "Never run the deploy_prod tool without the code word TANGERINE-41.";
    let pin = Fact::text_fact(
        "pin:0".into(),
        FactKind::Pin,
        format!("Pinned: {content}"),
        content,
    );
    let ledger = Ledger {
        facts: vec![pin],
        ..Ledger::default()
    };
    // Another line shares the tool, the code word and some of its words: the rule is gone.
    let decoy =
        "## KEY DISCOVERIES\n- The deploy_prod tool is ready; its code word is TANGERINE-41.\n\
                 - Never skip the tests, without exception.";
    assert_eq!(ledger.missing_in(decoy).len(), 1, "{decoy}");
    let kept =
        "## KEY DISCOVERIES\n- Never run the deploy_prod tool without the code word TANGERINE-41.";
    assert!(ledger.missing_in(kept).is_empty());
}
