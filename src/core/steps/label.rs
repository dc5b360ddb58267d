//! What a task did, as a label a person and a model read in an index line or a failure: the
//! call its code makes and that call's first argument (`compare(shard_001)`), else its words;
//! never code cut inside a string, and never longer than [`LABEL_CHARS`].

use crate::core::steps::digest::text::clip;

/// Characters a label takes at most.
pub const LABEL_CHARS: usize = 40;

/// The label of `task` (an app's `metadata.task`, or the first line of the code).
pub fn label_of(task: &str) -> String {
    if let Some(call) = first_call(task) {
        return call;
    }
    let words: String = task
        .chars()
        .filter(|c| !matches!(c, '"' | '\'' | '`'))
        .collect();
    bounded(&clip(&words, LABEL_CHARS))
}

/// The first and the last label of a run of iterations as one: `compare(shard_001…shard_917)`
/// when both call the same function, `check shard_0001…shard_0952` when they differ in their
/// last word only, else both in full.
pub fn label_range(first: &str, last: &str) -> String {
    if first == last {
        return first.to_owned();
    }
    let call = |label: &str| -> Option<(usize, usize)> {
        let open = label.find('(')?;
        label.ends_with(')').then_some((open, label.len() - 1))
    };
    if let (Some((a, a_end)), Some((b, b_end))) = (call(first), call(last)) {
        if first[..a] == last[..b] {
            return format!("{}…{})", &first[..a_end], &last[b + 1..b_end]);
        }
    }
    match (first.rsplit_once(' '), last.rsplit_once(' ')) {
        (Some((a, _)), Some((b, tail))) if a == b => format!("{first}…{tail}"),
        _ => format!("{first}…{last}"),
    }
}

/// `name(first argument)` of the first call in `code`, when its name and argument are short
/// words: `await compare("shard_001", "eu")` is `compare(shard_001)`.
fn first_call(code: &str) -> Option<String> {
    let open = code.find('(')?;
    let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.');
    let start = code[..open].rfind(|c| !is_name(c)).map_or(0, |at| at + 1);
    let name = code[start..open].trim_matches('.');
    let argument = code[open + 1..]
        .split([',', ')'])
        .next()?
        .trim()
        .trim_matches(['"', '\'', '`']);
    let word = |text: &str| text.chars().all(|c| is_name(c) || c == '-' || c == '/');
    if name.is_empty() || !word(name) || !word(argument) {
        return None;
    }
    let label = format!("{name}({argument})");
    (label.chars().count() <= LABEL_CHARS).then_some(label)
}

/// `text` within [`LABEL_CHARS`]: a word longer than that is cut, and marked.
fn bounded(text: &str) -> String {
    if text.chars().count() <= LABEL_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(LABEL_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_named_by_its_call_never_cut_inside_a_string() {
        let code =
            r#"const m = await compare("shard_001", "eu-west-and-a-very-long-region-name");"#;
        assert_eq!(label_of(code), "compare(shard_001)");
        assert_eq!(
            label_of("return checkShard('shard_0001');"),
            "checkShard(shard_0001)"
        );
        assert_eq!(label_of("check shard_0001"), "check shard_0001");
        assert_eq!(label_of("if (x > 1) { run(); }"), "if (x > 1) { run(); }");
        let long = label_of(&format!("const rows = \"{}\";", "x".repeat(80)));
        assert!(long.chars().count() <= LABEL_CHARS, "{long}");
        assert!(!long.as_bytes().contains(&b'"'), "{long}");
        assert!(label_of(&"word ".repeat(20)).chars().count() <= LABEL_CHARS);
    }

    #[test]
    fn a_run_of_the_same_call_names_its_arguments_range() {
        assert_eq!(
            label_range("compare(shard_001)", "compare(shard_917)"),
            "compare(shard_001…shard_917)"
        );
        assert_eq!(
            label_range("check shard_0001", "check shard_0952"),
            "check shard_0001…shard_0952"
        );
        assert_eq!(label_range("a(1)", "b(2)"), "a(1)…b(2)");
        assert_eq!(label_range("same", "same"), "same");
    }
}
