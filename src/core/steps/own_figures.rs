//! The session's own figures, which a summary names without any log holding them as text: the
//! numbers of its iterations ("Continue from iteration 145.") and the counts of its entries
//! ("113 of 117 executions succeeded."). A number a line names is one of them when it counts
//! the compacted entries of one kind (all, succeeded, failed), the iterations, or when the
//! line calls it an iteration and the session has reached it; any other is still checked.

use crate::core::steps::selection::Selection;
use crate::core::steps::terms::without_digit_commas;

/// The counts of a session's entries and the last iteration it has numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnFigures {
    /// The running iteration: iteration numbers up to it are the session's.
    current: u32,
    /// The counts of the compacted entries: executions, then tool entries (all, succeeded,
    /// failed), then the iterations.
    counts: [u64; 7],
}

impl OwnFigures {
    /// The figures of `selection`: its iterations, and the compacted entries of the execution
    /// and tool logs, all, succeeded and failed.
    pub fn of(selection: &Selection) -> OwnFigures {
        // Executions all, succeeded, failed; tool entries the same; the iterations.
        let mut counts = [0u64; 7];
        let mut tally = |at: usize, outcome: Option<bool>| {
            counts[at] += 1;
            match outcome {
                Some(true) => counts[at + 1] += 1,
                Some(false) => counts[at + 2] += 1,
                None => {}
            }
        };
        for (_, entry) in &selection.execution {
            tally(0, entry.fields().success());
        }
        for (_, entry) in &selection.tool_activity {
            tally(3, entry.fields().outcome());
        }
        counts[6] = u64::from(selection.last.saturating_sub(selection.first)) + 1;
        OwnFigures {
            current: selection.current,
            counts,
        }
    }

    /// The numbers of `line` (digit grouping removed, as `verify::items_in` gives them) that
    /// are the session's own: a count of its entries, or an iteration number up to the running
    /// one where the line calls the number an iteration.
    pub fn in_line(&self, line: &str) -> Vec<String> {
        let mut own: Vec<String> = Vec::new();
        let mut naming_iterations = false;
        for word in words(&without_digit_commas(line)) {
            let Some(number) = whole_number(word) else {
                let is = |words: &[&str]| words.iter().any(|w| w.eq_ignore_ascii_case(word));
                if is(&ITERATION_WORDS) {
                    naming_iterations = true;
                } else if !is(&CONNECTORS) {
                    naming_iterations = false;
                }
                continue;
            };
            let an_iteration = naming_iterations && number <= u64::from(self.current);
            if an_iteration || (number > 0 && self.counts.contains(&number)) {
                own.push(word.to_owned());
            }
        }
        own
    }
}

/// `word` as a whole number, when it is only ASCII digits and fits.
fn whole_number(word: &str) -> Option<u64> {
    word.bytes().try_fold(0u64, |number, byte| {
        let digit = byte.checked_sub(b'0').filter(|d| *d <= 9)?;
        number.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// The words that make the numbers after them iteration numbers.
const ITERATION_WORDS: [&str; 5] = ["iteration", "iterations", "iter", "iters", "iteration's"];

/// The words between iteration numbers that keep the next number one too ("1 to 145",
/// "3, 5 and 7").
const CONNECTORS: [&str; 6] = ["to", "and", "or", "through", "from", "until"];

/// The words and numbers of `line`: runs of ASCII letters, digits and apostrophes; anything
/// else separates them (so `1-144` is two numbers and `145.` one).
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(current: u32, counts: &[u64]) -> OwnFigures {
        let mut all = [0; 7];
        all[..counts.len()].copy_from_slice(counts);
        OwnFigures {
            current,
            counts: all,
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
