//! Text helpers of the offline summary: one line, one sentence, a value cut to size.

use crate::core::order::text_search::TextSearch;

/// Points an offline summary writes about its own range ("Iterations 1-4 are compacted…");
/// a later summary states them afresh instead of carrying stale ones forward.
pub(crate) fn is_bookkeeping(point: &str) -> bool {
    point.starts_with("Iterations ")
        || point.starts_with("Open failures, recall(n) each:")
        || point.starts_with("Reached by iteration")
        || point.starts_with("Latest conclusion")
        || point.contains_text(" code executions in iterations ")
        || point.starts_with("Question: ")
}

/// `words` joined by single spaces, up to the first word after which `enough` holds of the
/// words so far.
fn words_until<'a>(words: impl Iterator<Item = &'a str>, enough: impl Fn(&str) -> bool) -> String {
    let mut flat = String::new();
    for word in words {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.push_str(word);
        if enough(&flat) {
            break;
        }
    }
    flat
}

/// Markup a bullet's content does not start with.
const LEADING_MARKUP: [char; 6] = ['#', '>', '-', '*', '=', ' '];

/// One line of log text as a bullet's content: one line, no markup at its start, cut at a
/// word's end (never inside a word, a number or an id). Reads the words of `text` only up to
/// where the cut is known, so that a line of a hundred kilobytes costs what its first `max`
/// characters cost.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let mut words = text
        .split_whitespace()
        .skip_while(|word| word.trim_start_matches(LEADING_MARKUP).is_empty());
    let first = words
        .next()
        .map(|word| word.trim_start_matches(LEADING_MARKUP));
    let flat = words_until(first.into_iter().chain(words), |flat| {
        flat.len() > max && flat.as_bytes().contains(&b' ') && flat.chars().count() > max
    });
    clip_flat(&flat, max)
}

/// [`clip`] of a line already flat: one space between words, no markup at its start.
fn clip_flat(flat: &str, max: usize) -> String {
    if flat.chars().count() <= max {
        return flat.to_owned();
    }
    let limit = flat.char_indices().nth(max).map_or(flat.len(), |(i, _)| i);
    // A first word longer than `max` is kept whole.
    let cut = flat[..limit]
        .rfind(' ')
        .unwrap_or_else(|| flat.find(' ').unwrap_or(flat.len()));
    if cut == flat.len() {
        return flat.to_owned();
    }
    format!("{}…", flat[..cut].trim_end())
}

pub(crate) fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            c == '\n' || (matches!(c, '.' | '!' | '?') && text[i + 1..].starts_with(' '))
        })
        .map_or(text.len(), |(i, c)| if c == '\n' { i } else { i + 1 });
    &text[..end]
}

pub(crate) fn last_sentence(text: &str) -> &str {
    let text = text.trim();
    let start = text
        .char_indices()
        .rfind(|&(i, c)| {
            c == '\n'
                || (matches!(c, '.' | '!' | '?')
                    && text[i + 1..].starts_with(' ')
                    && i + 2 < text.len())
        })
        .map_or(0, |(i, _)| i + 1);
    text[start..].trim()
}

/// What a piece of code is for: `metadata.task` when the app says, else its first line.
pub(crate) fn task_of(code: &str, task: Option<String>) -> String {
    task.unwrap_or_else(|| first_line(code).to_owned())
}

pub(crate) fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// `text` cut to about `max` characters, never inside a word, a number or a JSON token: the cut
/// falls after a separator (space, comma, bracket) and is marked with `…`. Like [`clip`], reads
/// only as far as the cut.
pub(crate) fn cut_whole(text: &str, max: usize) -> String {
    let flat = words_until(text.split_whitespace(), |flat| {
        flat.len() > max && flat.chars().count() > max
    });
    cut_flat(flat, max)
}

/// [`cut_whole`] of a text already flat: one space between words.
fn cut_flat(flat: String, max: usize) -> String {
    if flat.chars().count() <= max {
        return flat;
    }
    let limit = flat.char_indices().nth(max).map_or(flat.len(), |(i, _)| i);
    let cut = flat[..limit]
        .rfind([' ', ',', '[', '{', ';'])
        .map_or(0, |i| i + 1);
    format!("{} …", flat[..cut].trim_end())
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
