//! Iteration boundaries: the reasoning-log header lines and where un-numbered entries belong.

/// The reasoning-log entry that starts iteration `n`.
pub fn iteration_header(n: u32) -> String {
    format!("=== ITERATION {n} ===")
}

/// The iteration number of a header entry (`=== ITERATION N ===` as its first line).
pub fn parse_iteration_header(entry: &str) -> Option<u32> {
    let first_line = header_line(entry)?;
    let inner = first_line
        .strip_prefix("=== ITERATION ")?
        .strip_suffix(" ===")?;
    inner.trim().parse().ok()
}

/// The first line of `entry`, trimmed, when it starts like a header (`===`); most entries
/// are not headers and are rejected without looking for the end of their first line.
fn header_line(entry: &str) -> Option<&str> {
    let entry = entry.trim_start_matches(|c: char| c.is_whitespace() && c != '\n');
    if !entry.starts_with("===") {
        return None;
    }
    Some(entry.lines().next()?.trim())
}

/// The first line of a compacted-summary entry covering iterations `first..=last`.
pub fn summary_header(first: u32, last: u32) -> String {
    format!("=== COMPACTED SUMMARY (Iterations {first}-{last}) ===")
}

/// The range `(first, last)` of a compacted-summary entry, read from its first line.
pub fn parse_summary_header(entry: &str) -> Option<(u32, u32)> {
    let first_line = header_line(entry)?;
    let inner = first_line
        .strip_prefix("=== COMPACTED SUMMARY (Iterations ")?
        .strip_suffix(") ===")?;
    let (first, last) = inner.split_once('-')?;
    Some((first.trim().parse().ok()?, last.trim().parse().ok()?))
}

/// The iteration each reasoning entry belongs to: a header starts its iteration, a compacted
/// summary stands for the last iteration it covers, and entries before any of them belong to
/// iteration 0 (a preamble).
pub fn reasoning_iterations(log: &[String]) -> Vec<u32> {
    let mut current = 0;
    log.iter()
        .map(|entry| {
            if let Some(n) = parse_iteration_header(entry) {
                current = n;
            } else if let Some((_, last)) = parse_summary_header(entry) {
                current = last;
            }
            current
        })
        .collect()
}

/// The highest iteration the reasoning log names (headers and summary ranges), 0 when none.
pub fn highest_reasoning_iteration(log: &[String]) -> u32 {
    log.iter()
        .filter_map(|entry| {
            parse_iteration_header(entry).or_else(|| parse_summary_header(entry).map(|r| r.1))
        })
        .max()
        .unwrap_or(0)
}

/// Completes the iterations of a log in which some entries do not state theirs: such an entry
/// takes the iteration of the nearest earlier entry that states one, else of the nearest later
/// one, else `fallback` (logs are appended in order, so position tells where it belongs).
pub fn infer_iterations(stated: &[Option<u32>], fallback: u32) -> Vec<u32> {
    let mut next_known = vec![None; stated.len()];
    let mut later = None;
    for (slot, value) in next_known.iter_mut().zip(stated).rev() {
        if value.is_some() {
            later = *value;
        }
        *slot = later;
    }
    let mut earlier = None;
    stated
        .iter()
        .zip(next_known)
        .map(|(value, following)| {
            if value.is_some() {
                earlier = *value;
            }
            earlier.or(following).unwrap_or(fallback)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        assert_eq!(parse_iteration_header(&iteration_header(12)), Some(12));
        assert_eq!(
            parse_iteration_header("=== ITERATION 3 ===\nthinking"),
            Some(3)
        );
        assert_eq!(parse_iteration_header("=== ITERATION x ==="), None);
        assert_eq!(parse_iteration_header("text === ITERATION 3 ==="), None);
        assert_eq!(
            parse_iteration_header("  === ITERATION 4 ===  \r\nx"),
            Some(4)
        );
        assert_eq!(parse_iteration_header("\n=== ITERATION 5 ==="), None);
        assert_eq!(parse_summary_header(&summary_header(1, 7)), Some((1, 7)));
        assert_eq!(
            parse_summary_header("=== COMPACTED SUMMARY (Iterations 1-7) ===\nbody"),
            Some((1, 7))
        );
    }

    #[test]
    fn reasoning_entries_follow_the_last_header() {
        let log: Vec<String> = [
            "preamble",
            "=== COMPACTED SUMMARY (Iterations 1-4) ===\n...",
            "=== ITERATION 5 ===",
            "a",
            "=== ITERATION 6 ===",
            "b",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(reasoning_iterations(&log), vec![0, 4, 5, 5, 6, 6]);
        assert_eq!(highest_reasoning_iteration(&log), 6);
    }

    #[test]
    fn inference_uses_neighbours_then_fallback() {
        assert_eq!(
            infer_iterations(&[None, Some(2), None, None, Some(3), None], 9),
            vec![2, 2, 2, 2, 3, 3]
        );
        assert_eq!(infer_iterations(&[None, None], 4), vec![4, 4]);
        assert_eq!(infer_iterations(&[], 4), Vec::<u32>::new());
    }
}
