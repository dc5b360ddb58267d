//! A summary entry in a message list's words: the core writes its header, its source line and
//! its index lines about iterations; a message list's model reads turns (iteration N is turn
//! N). The summary message says "Turns 1-40" and is read back into the logs as the core wrote
//! it, so that the next compaction parses it as its own.

/// The phrases of a summary entry that name iterations, each beside the one a message list's
/// model reads instead, as lines begin with them.
const PHRASES: [(&str, &str); 4] = [
    (
        "=== COMPACTED SUMMARY (Iterations ",
        "=== COMPACTED SUMMARY (Turns ",
    ),
    ("(Originals of iterations ", "(Originals of turns "),
    ("- Iterations ", "- Turns "),
    ("- Iteration ", "- Turn "),
];

/// `entry`, a summary entry the core wrote, as the summary message of a message list says it.
pub fn in_turns(entry: &str) -> String {
    reworded(entry, |(core, list)| (core, list))
}

/// `text`, a message of the list, read back as the core wrote it when it is a summary message
/// [`in_turns`] wrote; `None` for any other message (its words are the app's).
pub fn in_iterations(text: &str) -> Option<String> {
    let (_, header) = PHRASES[0];
    text.starts_with(header)
        .then(|| reworded(text, |(core, list)| (list, core)))
}

/// `text` with each line that begins with one side of a phrase pair (`from_to` picks which)
/// beginning with the other instead.
fn reworded(text: &str, from_to: fn((&'static str, &'static str)) -> (&str, &str)) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let swapped = PHRASES.iter().find_map(|pair| {
            let (from, to) = from_to(*pair);
            line.strip_prefix(from).map(|rest| (to, rest))
        });
        match swapped {
            Some((to, rest)) => {
                out.push_str(to);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::log::iteration::{parse_summary_header, parse_summary_source};
    use crate::core::order::text_search::TextSearch;

    const ENTRY: &str = "=== COMPACTED SUMMARY (Iterations 1-40) ===\n\
        (Originals of iterations 1-40: archive msgs_archived_logs_1; the recall tool reads them back.)\n\
        ### 📊 KEY DISCOVERIES\n\
        - Iterations 1–38 (archive msgs_archived_logs_1): 38 results of fetch_page; recall(1..38)\n\
        - Iteration 40 (this archive): 1 result of fetch_page; recall(40..40)\n\
        - Iterations of the model's own words stay as written.\n\
        === END COMPACTED SUMMARY ===";

    #[test]
    fn a_summary_speaks_of_turns_and_reads_back_as_the_core_wrote_it() {
        let said = in_turns(ENTRY);
        assert!(
            said.starts_with("=== COMPACTED SUMMARY (Turns 1-40) ===\n(Originals of turns 1-40")
        );
        assert!(
            said.contains_text("\n- Turns 1–38 (archive")
                && said.contains_text("\n- Turn 40 (this")
        );
        assert_eq!(parse_summary_header(&said), None, "not the core's header");
        let back = in_iterations(&said).expect("a summary of ours");
        assert_eq!(back, ENTRY);
        assert_eq!(parse_summary_header(&back), Some((1, 40)));
        assert_eq!(parse_summary_source(&back), Some("msgs_archived_logs_1"));
        // The app's own messages are not ours, whatever their lines begin with.
        for other in ["Please also check region 7.\n- Turn the page", ENTRY] {
            assert_eq!(in_iterations(other), None, "{other}");
        }
    }
}
