//! An answer cut at its output limit, kept as far as it is whole: a JSON object closed after
//! its last complete point, a text without the line the cut ran through (and without a code
//! block the cut left open). What the cut took is the check's to name: a missing section is
//! asked for again, a lost fact repaired in.

use crate::core::order::join::Joined;

/// What of `answer`, cut at the model's output limit, is whole.
pub fn salvaged(answer: &str) -> String {
    let trimmed = answer.trim_start();
    if trimmed.starts_with('{') {
        if let Some(closed) = closed_json(trimmed) {
            return closed;
        }
    }
    whole_lines(answer)
}

/// `text` without its last line unless the text ends at a line's end, and without a code
/// block left open.
fn whole_lines(text: &str) -> String {
    let kept = match text.rfind('\n') {
        Some(at) if !text.ends_with('\n') => &text[..at],
        None if !text.ends_with('\n') => "",
        _ => text,
    };
    let mut lines: Vec<&str> = kept.lines().collect();
    let fences: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with("```"))
        .map(|(at, _)| at)
        .collect();
    if fences.len() % 2 == 1 {
        if let Some(&open) = fences.last() {
            lines.truncate(open);
        }
    }
    lines.joined("\n").trim_end().to_owned()
}

/// A JSON object cut inside: closed after its last complete value in an array, or after its
/// last closed array or object; `None` when it is whole or holds nothing complete.
fn closed_json(text: &str) -> Option<String> {
    let mut open: Vec<u8> = Vec::new();
    // Where the text can be cut and closed, and how many brackets are open there: no bracket
    // closes after the last such place (a close is one), so they are the first of `open`.
    let mut safe: Option<(usize, usize)> = None;
    let (mut in_string, mut escaped) = (false, false);
    for (at, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    if open.last() == Some(&b'[') {
                        safe = Some((at + 1, open.len()));
                    }
                }
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                open.push(byte);
                if byte == b'[' {
                    safe = Some((at + 1, open.len()));
                }
            }
            b'}' | b']' => {
                open.pop();
                if open.is_empty() {
                    // The object closed: it was not cut.
                    return None;
                }
                safe = Some((at + 1, open.len()));
            }
            _ => {}
        }
    }
    let (end, depth) = safe?;
    let mut closed = text[..end].trim_end().trim_end_matches(',').to_owned();
    for bracket in open[..depth].iter().rev() {
        closed.push(if *bracket == b'[' { ']' } else { '}' });
    }
    Some(closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_loses_the_line_the_cut_ran_through_and_a_code_block_left_open() {
        assert_eq!(salvaged("### A\n- one\n- tw"), "### A\n- one");
        assert_eq!(salvaged("### A\n- one\n"), "### A\n- one");
        assert_eq!(
            salvaged("### A\n- one\n```js\nlet x = 1;\nlet"),
            "### A\n- one"
        );
        assert_eq!(
            salvaged("### A\n```js\nx()\n```\n- two\n- thr"),
            "### A\n```js\nx()\n```\n- two"
        );
        assert_eq!(salvaged("cut in the first line"), "");
    }

    #[test]
    fn a_json_object_is_closed_after_its_last_complete_point() {
        assert_eq!(
            salvaged(r#"{"objective_achieved": ["a", "b"], "key_discoveries": ["c", "d is cu"#),
            r#"{"objective_achieved": ["a", "b"], "key_discoveries": ["c"]}"#
        );
        assert_eq!(
            salvaged(r#"{"o": ["a \"q\" ]"], "k": [{"x": "y"}, {"x": "#),
            r#"{"o": ["a \"q\" ]"], "k": [{"x": "y"}]}"#
        );
        assert_eq!(
            salvaged(r#"{"o": ["a"], "k": ["#),
            r#"{"o": ["a"], "k": []}"#
        );
        // Whole JSON is not cut: it is read as the text it is.
        assert_eq!(salvaged("{\"o\": [\"a\"]}\n"), "{\"o\": [\"a\"]}");
    }
}
