use super::*;
use crate::core::order::text_search::TextSearch;
use crate::core::steps::validation::validate_summary;

const CANONICAL: &str =
    "### 🎯 OBJECTIVE ACHIEVED\n- Counted the rows of sales_2024.csv: 12,140.\n\n\
### 📊 KEY DISCOVERIES\n- The north region leads with 4,210 rows.\n\n\
### ✅ SUCCESSFUL SOLUTIONS\n- rows.filter(Boolean) removed the blank lines.";

fn headings(summary: &str) -> Vec<&str> {
    summary.lines().filter(|l| l.starts_with("###")).collect()
}

#[test]
fn reasoning_blocks_are_removed_before_anything_is_read() {
    for wrapped in [
        format!("<think>\nThe user wants a summary. I cannot skip the figures.\n</think>\n\n{CANONICAL}"),
        format!("<THINKING>first</THINKING>\n<think>second</think>{CANONICAL}"),
        format!("<think>\nI am unable to decide the order yet; the heading comes next.\n{CANONICAL}"),
        format!("Thinking: the user wants the six sections, so I will write them.\nI cannot forget the figures.\n\n{CANONICAL}"),
        format!("**Thinking:** short\n{CANONICAL}"),
    ] {
        let (summary, format) = read_answer(&wrapped);
        assert_eq!(summary, CANONICAL, "{wrapped}");
        assert_eq!(format, AnswerFormat::Markdown);
        assert!(validate_summary(&summary).valid, "{wrapped}");
    }
    // Only a block at the head is reasoning; the same words inside a point stay.
    let quoted = format!("{CANONICAL}\n- The log printed <think>x</think> verbatim.");
    assert_eq!(read_answer(&quoted).0, quoted);
    // An answer that is all reasoning has nothing left to store.
    assert_eq!(read_answer("<think>only musings").0, "");
}

#[test]
fn a_json_answer_whose_keys_name_the_sections_is_rendered_as_sections() {
    let json = r#"{"objective_achieved": ["Counted the rows of sales_2024.csv: 12,140."],
        "Key Discoveries": "The north region leads with 4,210 rows.",
        "successfulSolutions": ["rows.filter(Boolean) removed the blank lines."],
        "TOOLS-USED-SUCCESSFULLY": [],
        "critical_insights": null}"#;
    for answer in [
        json.to_owned(),
        format!("```json\n{json}\n```"),
        format!("Here is the JSON you asked for:\n```\n{json}\n```\nLet me know if you need more."),
        format!("<think>json it is</think>\n{{\"summary\": {json}}}"),
    ] {
        let (summary, format) = read_answer(&answer);
        assert_eq!(format, AnswerFormat::Json, "{answer}");
        assert_eq!(summary, CANONICAL, "{answer}");
    }
}

#[test]
fn json_values_of_every_kind_become_points_and_nothing_is_dropped() {
    let answer = r#"{"🎯 Objective Achieved": ["* starred", "• dotted", "- dashed", "two\nlines"],
        "key_discoveries": [{"file": "a.csv", "rows": 12140, "ok": true, "note": null}, 991.402745709],
        "successful_solutions": ["```js\nrows.filter(Boolean)\n```"],
        "next_steps": ["shard_0044", "shard_0045"]}"#;
    let (summary, format) = read_answer(answer);
    assert_eq!(format, AnswerFormat::Json);
    assert_eq!(
        summary,
        "### 🎯 OBJECTIVE ACHIEVED\n- starred\n- dotted\n- dashed\n- two\n- lines\n\n\
         ### 📊 KEY DISCOVERIES\n- file: a.csv\n- rows: 12140\n- ok: true\n- 991.402745709\n\n\
         ### ✅ SUCCESSFUL SOLUTIONS\n```js\nrows.filter(Boolean)\n```\n\n\
         ### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING\n- next_steps: shard_0044\n- next_steps: shard_0045"
    );
}

#[test]
fn json_that_names_no_section_or_is_not_the_answer_stays_text() {
    for answer in [
        r#"{"answer": "I cannot help with that."}"#,
        r#"{"a": 1, "b": {"key_discoveries": []}}"#,
        "{\"objective_achieved\": [\"cut off",
    ] {
        let (summary, format) = read_answer(answer);
        assert_eq!(format, AnswerFormat::Markdown, "{answer}");
        assert!(!validate_summary(&summary).valid, "{answer}");
    }
    // A refusal written into the schema: only the objective has points, so sections are missing.
    let refusal = r#"{"objective_achieved": ["I cannot summarise this."], "key_discoveries": [], "successful_solutions": []}"#;
    let (summary, format) = read_answer(refusal);
    assert_eq!(format, AnswerFormat::Json);
    assert_eq!(
        validate_summary(&summary).missing_sections,
        ["KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"]
    );
    // Text after the object is content, not a wrapper: the answer is read as text.
    let code = format!("{{\"x\": 1}}\n{CANONICAL}");
    assert_eq!(read_answer(&code).1, AnswerFormat::Markdown);
}

#[test]
fn headings_in_other_languages_plain_titles_and_bold_labels_are_sections() {
    for answer in [
        "## 🎯 Objetivo logrado\n- a\n## 📊 Descubrimientos clave\n- b\n## ✅ Soluciones exitosas\n- c",
        "### 🎯 目标达成\n- a\n### 📊 关键发现\n- b\n### ✅️ 成功的解决方案\n- c",
        "🎯 Objectif atteint\n- a\n📊 Découvertes clés\n- b\n✅ Solutions réussies\n- c",
        "OBJECTIVE ACHIEVED:\n- a\nKey Discoveries\n- b\nSuccessful solutions:\n- c",
    ] {
        let (summary, _) = read_answer(answer);
        assert_eq!(
            headings(&summary),
            [
                "### 🎯 OBJECTIVE ACHIEVED",
                "### 📊 KEY DISCOVERIES",
                "### ✅ SUCCESSFUL SOLUTIONS"
            ],
            "{answer}"
        );
        assert_eq!(
            summary.lines().filter(|l| l.starts_with("- ")).count(),
            3,
            "{answer}"
        );
    }
    let (summary, _) = read_answer(
        "**Objective Achieved:** counted 12,140 rows.\n**Key Discoveries:** the north region leads.\n__Successful Solutions__: rows.filter(Boolean)",
    );
    assert_eq!(
        summary,
        "### 🎯 OBJECTIVE ACHIEVED\ncounted 12,140 rows.\n### 📊 KEY DISCOVERIES\nthe north region leads.\n\
         ### ✅ SUCCESSFUL SOLUTIONS\nrows.filter(Boolean)"
    );
}

#[test]
fn text_that_only_starts_like_a_section_heads_nothing() {
    for line in [
        "- Key discoveries",
        "> Objective achieved",
        "✅ Fixed the parser by escaping quotes",
        "✅ 14 tests pass",
        "✅ Done.",
        "**Note:** key discoveries follow",
        "The objective achieved so far",
    ] {
        assert_eq!(heading_section(line), None, "{line}");
    }
}

#[test]
fn a_json_answer_is_read_to_its_depth_bound_and_refused_past_it() {
    let nested = |depth: usize| {
        format!(
            r#"{{"objective_achieved": {}"found"{}, "key_discoveries": ["north"]}}"#,
            r#"{"a":["#.repeat(depth),
            "]}".repeat(depth)
        )
    };
    // The section object and each level's object and array: 1 + 2 × 15 = 31 levels.
    let (summary, format) = read_answer(&nested(15));
    assert_eq!(format, AnswerFormat::Json);
    assert!(
        summary.contains_text(&format!("- {}found", "a: ".repeat(15))),
        "{summary}"
    );
    // 33 levels: read as text, which names no section.
    let (summary, format) = read_answer(&nested(16));
    assert_eq!(format, AnswerFormat::Markdown);
    assert!(headings(&summary).is_empty(), "{summary}");
}
