//! The crate's one search for a text in a text. The standard library's `str` methods that take
//! a `&str` pattern (`find`, `contains`, `split`, `split_once`, `replace`, `match_indices`)
//! share its Two-Way searcher, 3.4 KB of code in the module; this is a Knuth–Morris–Pratt
//! search in a few hundred bytes, linear in the text and the needle whatever they hold (it
//! skips to the next byte that can begin a match while nothing is matched).
//! Patterns of one `char` or a `char` test keep the standard methods (their searcher is
//! small).

/// Where `needle` first begins in `text` (a byte offset, at a `char` boundary), as
/// `text.find(needle)` gives it.
pub fn find(text: &str, needle: &str) -> Option<usize> {
    let (text, needle) = (text.as_bytes(), needle.as_bytes());
    let Some(last) = needle.len().checked_sub(1) else {
        return Some(0);
    };
    // `fallback[i]`: the longest proper prefix of `needle[..=i]` that also ends it.
    let mut fallback = vec![0usize; needle.len()];
    let mut matched = 0;
    for i in 1..needle.len() {
        while matched > 0 && needle[i] != needle[matched] {
            matched = fallback[matched - 1];
        }
        matched += usize::from(needle[i] == needle[matched]);
        fallback[i] = matched;
    }
    matched = 0;
    let mut i = 0;
    while i < text.len() {
        if matched == 0 {
            // Nothing matched yet: on to the next byte that can begin a match.
            i += text[i..].iter().position(|&byte| byte == needle[0])?;
        }
        let byte = text[i];
        while matched > 0 && byte != needle[matched] {
            matched = fallback[matched - 1];
        }
        if byte == needle[matched] {
            if matched == last {
                return Some(i - last);
            }
            matched += 1;
        }
        i += 1;
    }
    None
}

/// A text searched for texts: the `&str`-pattern methods of `str` the crate uses, through
/// [`find`].
pub trait TextSearch {
    /// `str::find` of a text.
    fn find_text(&self, needle: &str) -> Option<usize>;
    /// `str::contains` of a text.
    fn contains_text(&self, needle: &str) -> bool;
    /// `str::split_once` at a text.
    fn split_once_text(&self, separator: &str) -> Option<(&str, &str)>;
    /// `str::split` at a non-empty text (an empty `separator` gives the whole text, where std
    /// splits between every character).
    fn split_text<'a>(&'a self, separator: &'a str) -> SplitText<'a>;
    /// `str::replacen` of a text, at most `count` times (`usize::MAX`: `str::replace`).
    fn replace_text(&self, from: &str, to: &str, count: usize) -> String;
    /// `str::match_indices` of a non-empty text, its offsets only.
    fn offsets_of<'a>(&'a self, needle: &'a str) -> OffsetsOf<'a>;
    /// `str::trim_start_matches` of a text: the rest after every leading `prefix`.
    fn trim_start_text(&self, prefix: &str) -> &str;
}

impl TextSearch for str {
    fn find_text(&self, needle: &str) -> Option<usize> {
        find(self, needle)
    }

    fn contains_text(&self, needle: &str) -> bool {
        find(self, needle).is_some()
    }

    fn split_once_text(&self, separator: &str) -> Option<(&str, &str)> {
        let at = find(self, separator)?;
        Some((&self[..at], &self[at + separator.len()..]))
    }

    fn split_text<'a>(&'a self, separator: &'a str) -> SplitText<'a> {
        SplitText {
            rest: Some(self),
            separator,
        }
    }

    fn replace_text(&self, from: &str, to: &str, count: usize) -> String {
        let mut out = String::with_capacity(self.len());
        let mut rest = self;
        for _ in 0..count {
            let Some((before, after)) = rest.split_once_text(from) else {
                break;
            };
            out.push_str(before);
            out.push_str(to);
            rest = after;
        }
        out.push_str(rest);
        out
    }

    fn offsets_of<'a>(&'a self, needle: &'a str) -> OffsetsOf<'a> {
        OffsetsOf {
            text: self,
            needle,
            at: 0,
        }
    }

    fn trim_start_text(&self, prefix: &str) -> &str {
        let mut rest = self;
        while let Some(after) = rest.strip_prefix(prefix).filter(|_| !prefix.is_empty()) {
            rest = after;
        }
        rest
    }
}

/// The pieces of a text between its separators ([`TextSearch::split_text`]).
pub struct SplitText<'a> {
    rest: Option<&'a str>,
    separator: &'a str,
}

impl<'a> Iterator for SplitText<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.split_once_text(self.separator) {
            Some((piece, after)) if !self.separator.is_empty() => {
                self.rest = Some(after);
                Some(piece)
            }
            _ => self.rest.take(),
        }
    }
}

/// Where a text stands in a text, each match after the last one's end
/// ([`TextSearch::offsets_of`]).
pub struct OffsetsOf<'a> {
    text: &'a str,
    needle: &'a str,
    at: usize,
}

impl Iterator for OffsetsOf<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let found = self.at + self.text.get(self.at..)?.find_text(self.needle)?;
        self.at = found + self.needle.len().max(1);
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts and needles that meet the search's corners: empty ones, overlaps, repeats,
    /// multi-byte characters, a needle longer than the text.
    const TEXTS: [&str; 9] = [
        "",
        "a",
        "aaaa",
        "abababcab",
        "ababcabababcababd",
        "xx, yy, , zz",
        "日本語の日本, 語",
        "aabaabaaab aabaaab",
        "[cleared [cleared. recall(3) x]",
    ];
    const NEEDLES: [&str; 12] = [
        "",
        "a",
        "aa",
        "ab",
        "abab",
        "ababd",
        ", ",
        "日本",
        "語",
        "aabaaab",
        "[cleared",
        "zzzzzzzzzzzzzz",
    ];

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn searches_as_the_standard_library_does() {
        for text in TEXTS {
            for needle in NEEDLES {
                let case = format!("{needle:?} in {text:?}");
                assert_eq!(text.find_text(needle), text.find(needle), "{case}");
                assert_eq!(text.contains_text(needle), text.contains(needle), "{case}");
                assert_eq!(
                    text.split_once_text(needle),
                    text.split_once(needle),
                    "{case}"
                );
                if !needle.is_empty() {
                    let ours: Vec<&str> = text.split_text(needle).collect();
                    let std: Vec<&str> = text.split(needle).collect();
                    assert_eq!(ours, std, "{case}");
                    let ours: Vec<usize> = text.offsets_of(needle).collect();
                    let std: Vec<usize> = text.match_indices(needle).map(|(i, _)| i).collect();
                    assert_eq!(ours, std, "{case}");
                    assert_eq!(
                        text.replace_text(needle, "<>", usize::MAX),
                        text.replace(needle, "<>"),
                        "{case}"
                    );
                    assert_eq!(
                        text.trim_start_text(needle),
                        text.trim_start_matches(needle),
                        "{case}"
                    );
                    assert_eq!(
                        text.replace_text(needle, "", 1),
                        text.replacen(needle, "", 1),
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_needle_of_repeats_in_a_text_of_repeats_is_found_in_one_pass() {
        // The case a naive search is quadratic in: a long run, and a needle of that run
        // ending in another byte.
        let text = "a".repeat(200_000) + "b";
        let needle = "a".repeat(10_000) + "b";
        assert_eq!(find(&text, &needle), text.find(&needle));
        assert_eq!(find(&text[..150_000], &needle), None);
        // Needles of repeats of every parity.
        for len in [31, 32, 33, 64] {
            let needle = "ab".repeat(len / 2) + &"c".repeat(len % 2);
            let text = "ab".repeat(100) + &needle + "ab";
            assert_eq!(find(&text, &needle), text.find(&needle), "{len}");
        }
    }
}
