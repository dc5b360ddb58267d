use super::*;
use crate::core::order::join::Joined;

#[test]
fn sentences_are_cut_at_their_ends() {
    assert_eq!(first_sentence("Load the CSV. Then count."), "Load the CSV.");
    assert_eq!(first_sentence("v1.2 is out\nnext"), "v1.2 is out");
    assert_eq!(last_sentence("First. Second one."), "Second one.");
    assert_eq!(clip("### heading   text", 40), "heading text");
    assert_eq!(clip("abcdef", 4), "abcdef");
    assert_eq!(clip("abcdef gh", 4), "abcdef…");
    let call = "vfs.read(\"web_events\") returned 42";
    assert_eq!(clip(call, 25), "vfs.read(\"web_events\")…");
}

/// Every word of `text`, one space between them: what `clip` and `cut_whole` read of a line
/// before they read only as far as their cut.
fn whole_flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().joined(" ")
}

#[test]
fn clip_and_cut_whole_read_only_as_far_as_their_cut_and_cut_as_the_whole_text_would_be_cut() {
    let pieces = [
        "#",
        "##",
        "-",
        "> ",
        "*",
        "=",
        " ",
        "  ",
        "\n",
        "\t",
        "row",
        "12",
        "checked;",
        ",",
        "[",
        "{",
        ";",
        "é",
        "日本語",
        "😀",
        "averyveryverylongwordindeed",
        "x",
        "— ",
        "\u{3000}",
    ];
    let mut seed = 0x2545_f491_u32;
    for case in 0..4000 {
        let mut text = String::new();
        for _ in 0..(case % 40) {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            text.push_str(pieces[seed as usize % pieces.len()]);
            if seed % 3 == 0 {
                text.push(' ');
            }
        }
        for max in [0, 1, 3, 8, 25, 60] {
            assert_eq!(
                clip(&text, max),
                clip_flat(whole_flat(&text).trim_start_matches(LEADING_MARKUP), max),
                "{text:?} at {max}"
            );
            assert_eq!(
                cut_whole(&text, max),
                cut_flat(whole_flat(&text), max),
                "{text:?} at {max}"
            );
        }
    }
    let long_line = format!("Iteration 7: {}", "row 7 checked; ".repeat(6_000));
    assert_eq!(clip(&long_line, 40), clip_flat(&whole_flat(&long_line), 40));
    assert_eq!(
        cut_whole(&long_line, 400),
        cut_flat(whole_flat(&long_line), 400)
    );
    assert_eq!(clip(&"- ".repeat(50_000), 40), "");
}
