//! The session's own figures, which a summary names without any log holding them as text: the
//! numbers of its iterations ("Continue from iteration 145.") and the counts of its entries
//! ("113 of 117 executions succeeded."). A number a line names is one of them when it counts
//! the compacted entries of one kind (all, succeeded, failed), the iterations, or when the
//! line calls it an iteration and the session has reached it; any other is still checked.

use crate::core::order::sort::sort_unique;
use crate::core::steps::selection::Selection;
use crate::core::steps::terms::without_digit_commas;

/// The counts of a session's entries and the last iteration it has numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnFigures {
    /// The running iteration: iteration numbers up to it are the session's.
    current: u32,
    /// Every count of the compacted entries, sorted, each once.
    counts: Vec<u64>,
}

/// How a tool entry's `status` reads, as the summary prompt reads it.
fn tool_outcome(status: &str) -> Option<bool> {
    match status {
        "success" | "ok" | "done" | "completed" => Some(true),
        "error" | "failed" | "failure" => Some(false),
        _ => None,
    }
}

impl OwnFigures {
    /// The figures of `selection`: its iterations, and the compacted entries of each log, all,
    /// succeeded and failed.
    pub fn of(selection: &Selection) -> OwnFigures {
        let tally = |outcomes: &mut dyn Iterator<Item = Option<bool>>| {
            let (mut all, mut succeeded, mut failed) = (0u64, 0u64, 0u64);
            for outcome in outcomes {
                all += 1;
                match outcome {
                    Some(true) => succeeded += 1,
                    Some(false) => failed += 1,
                    None => {}
                }
            }
            [all, succeeded, failed]
        };
        let runs = tally(
            &mut selection
                .execution
                .iter()
                .map(|(_, entry)| entry.fields().success()),
        );
        let tools = tally(
            &mut selection
                .tool_activity
                .iter()
                .map(|(_, entry)| entry.fields().status().and_then(|s| tool_outcome(&s))),
        );
        let iterations = u64::from(selection.last.saturating_sub(selection.first)) + 1;
        let mut counts: Vec<u64> = runs.into_iter().chain(tools).collect();
        counts.extend([
            iterations,
            u64::from(selection.last),
            selection.reasoning.len() as u64,
        ]);
        counts.retain(|count| *count > 0);
        sort_unique(&mut counts);
        OwnFigures {
            current: selection.current,
            counts,
        }
    }

    /// The numbers of `line` (digit grouping removed, as [`items_in`](super::verify::items_in)
    /// gives them) that are the session's own: a count of its entries, or an iteration number
    /// up to the running one where the line calls the number an iteration.
    pub fn in_line(&self, line: &str) -> Vec<String> {
        let mut own: Vec<String> = Vec::new();
        let mut naming_iterations = false;
        for word in words(&without_digit_commas(line)) {
            let Ok(number) = word.parse::<u64>() else {
                let lower = word.to_ascii_lowercase();
                if ITERATION_WORDS.contains(&lower.as_str()) {
                    naming_iterations = true;
                } else if !CONNECTORS.contains(&lower.as_str()) {
                    naming_iterations = false;
                }
                continue;
            };
            let an_iteration = naming_iterations && number <= u64::from(self.current);
            if an_iteration || self.counts.binary_search(&number).is_ok() {
                own.push(word.to_owned());
            }
        }
        own
    }
}

/// The words that make the numbers after them iteration numbers.
const ITERATION_WORDS: [&str; 5] = ["iteration", "iterations", "iter", "iters", "iteration's"];

/// The words between iteration numbers that keep the next number one too ("1 to 145",
/// "3, 5 and 7").
const CONNECTORS: [&str; 6] = ["to", "and", "or", "through", "from", "until"];

/// The words and numbers of `line`: runs of letters, digits and apostrophes; everything else
/// separates them (so `1-144` is two numbers and `145.` one).
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(current: u32, counts: &[u64]) -> OwnFigures {
        OwnFigures {
            current,
            counts: counts.to_vec(),
        }
    }

    #[test]
    fn iteration_numbers_up_to_the_running_one_are_the_sessions() {
        let session = figures(150, &[]);
        assert_eq!(session.in_line("- Continue from iteration 145."), ["145"]);
        assert_eq!(
            session.in_line("- Iterations 101-149 are compacted here; see iteration 150"),
            ["101", "149", "150"]
        );
        assert_eq!(
            session.in_line("- Iterations 120, 130 and 140 failed"),
            ["120", "130", "140"]
        );
        assert_eq!(
            session.in_line("- Continue from iteration 151."),
            Vec::<String>::new()
        );
        assert_eq!(session.in_line("- 145 rows in iteration 3"), ["3"]);
        assert_eq!(
            session.in_line("- iteration 12 loaded 145 rows"),
            ["12"],
            "a number after another word is not an iteration"
        );
    }

    #[test]
    fn counts_of_the_entries_are_the_sessions_wherever_they_stand() {
        let session = figures(150, &[4, 113, 117]);
        assert_eq!(
            session.in_line("- 113 of 117 executions succeeded."),
            ["113", "117"]
        );
        assert_eq!(
            session.in_line("- 114 of 117 executions succeeded."),
            ["117"]
        );
        assert_eq!(
            session.in_line("- removed 1,130 rows"),
            Vec::<String>::new()
        );
    }
}
