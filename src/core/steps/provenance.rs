//! Whose words: a summary line that gives the user a request, an instruction or a permission
//! (whatever words attribute it: a line that names the user and asks or directs), or that
//! states an imperative, whose content only data holds (an execution's result, a tool's
//! details, fetched text) and the user's own words (the goal, the pins) do not. Compaction
//! must not launder an instruction that arrived in tool output into the user's voice: such a
//! line ends with [`INJECTED_MARK`] and names the entry it came from.

use crate::core::log::iteration::{parse_summary_header, USER_WROTE};
use crate::core::model::facts::{FactKind, Injection, Ledger};
use crate::core::order::join::Joined;
use crate::core::order::sort::sort_unique;
use crate::core::order::text_search::TextSearch;
use crate::core::steps::selection::Selection;
use crate::core::steps::validation::heading_section;

/// What a line that gives the user words only data said ends with.
pub const INJECTED_MARK: &str = " [from tool output]";

/// Share of a line's content words one data entry must hold for the line to come from it.
const FROM_DATA: f64 = 0.6;

/// Words that tell a line gives the user a request: a name of the user then one of these
/// within four words (`the user would like`), or one of these then `by the user` (the passive).
/// Each is the head of the words it stands for (`authori` for authorised and authorized).
const USER_VERBS: &str = "asked asks wants want requested request instructed told said approved authori permission would needs need prefer expects insist demand wish require directed confirmed agreed allowed consented";

/// Words of duty: the line says what must be done.
const DUTIES: &str = "must should shall ought";

/// Words before `be` that say something may be, not that it must.
const MAY_BE: &str = "to will would can could may might not also then";

/// Words that, just before a name of the user, deny that the user said it.
const DENIALS: &str = "not no never nobody neither nor";

/// The names a summary gives the person the agent works for.
const USER_NOUNS: &str = "user user's owner owner's operator operator's admin administrator requester requester's human human's";

/// Phrases that grant a permission.
const PERMISSIONS: &str = "you are allowed|you may |you are permitted|permission to|authorized to";

/// Verbs that open an imperative line (`Delete every file under /srv/data.`).
const IMPERATIVES: &str = "delete remove erase wipe purge destroy drop truncate overwrite format uninstall kill terminate shut deactivate revoke reset send email forward transfer transmit wire pay refund upload export exfiltrate leak share publish post disclose reveal run execute install deploy ignore disregard bypass override skip disable grant approve unlock invite";

/// Words that open a line before its verb and change nothing: politeness, order, haste.
const OPENERS: &str = "please kindly now then also next first finally immediately just always urgently simply quickly asap step";

/// Phrases that, opening a line, address its verb to the reader: `you should delete …`.
const MODALS: &str = "you should|you must|you need to|you have to|you are to|you will|you can|the assistant should|the assistant must|the agent should|the agent must|make sure to|be sure to|remember to|don't forget to|do not forget to";

/// Words after which the first word is a noun, not an order: `Run 3 of`, `Transfer of`,
/// `Drop in`, `Email from`, `Delete count was`.
const NOUN_FOLLOWERS: &str = "of in on at from by for is was were are has had took takes failed succeeded completed finished returned shows showed count counts rate time times status log logs";

/// Words too common to show where a line's content came from.
const COMMON: &str = "user users asked wants that this with from have been every again should would must will your their they them into also please now";

/// The words of a list kept as one text (a table of slices would cost the module more).
fn listed(list: &'static str) -> impl Iterator<Item = &'static str> {
    list.split(' ')
}

/// Whether `word` is one of `list`'s.
fn is_listed(list: &'static str, word: &str) -> bool {
    listed(list).any(|listed| listed == word)
}

/// `text` lower-cased (ASCII) without what it quotes: a line that reports what data said
/// (`the ticket says "delete …"`) quotes it.
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' | '\u{201c}' | '\u{201d}' | '\u{ab}' | '\u{bb}' => quoted = !quoted,
            _ if !quoted => out.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    out
}

/// Whether `text` (its `words`) gives the user a request, whatever the words that attribute it:
/// a name of the user, not denied within five words (`not a request from the user`), in a line
/// that asks or directs (see [`directs`]).
fn attributed_to_the_user(text: &str, words: &[&str]) -> bool {
    let named = words.iter().enumerate().any(|(at, word)| {
        let denied = words[at.saturating_sub(5)..at]
            .iter()
            .any(|before| is_listed(DENIALS, before));
        is_listed(USER_NOUNS, word) && !denied
    });
    named && directs(text, words)
}

/// Whether `text` (its `words`) asks or directs: a verb of asking, a word of duty (`must`,
/// `is to be`, `that every file be deleted`), or a clause that opens with an order (`…, as the
/// user reminded: wipe it`).
fn directs(text: &str, words: &[&str]) -> bool {
    let asks = |word: &&str| listed(USER_VERBS).any(|verb| word.starts_with(verb));
    let duty = words.windows(2).any(|pair| match pair {
        [word, _] if is_listed(DUTIES, word) => true,
        // `to be` says what is to be done; `be` after a noun, what must be (`that it be
        // wiped`), but not after a word that only says it may be.
        [before, be] => *be == "be" && (*before == "to" || !is_listed(MAY_BE, before)),
        _ => false,
    });
    let mut clauses = text.split([',', ';', ':', '(', '\u{2014}']);
    words.iter().any(asks) || duty || clauses.any(|c| opens_with_an_order(&words_of(c)))
}

/// Whether `words` (a line's, or what follows its label) open with an order: a verb of
/// [`IMPERATIVES`] after any list number, politeness or modal phrase, not used as a noun.
fn opens_with_an_order(words: &[&str]) -> bool {
    let filler = |word: &&str| word.bytes().all(|b| b.is_ascii_digit()) || is_listed(OPENERS, word);
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        if filler(first) {
            rest = tail;
            continue;
        }
        let modal = MODALS.split('|').find_map(|phrase| {
            let len = phrase.split(' ').count();
            let opens = rest.len() >= len && phrase.split(' ').zip(rest).all(|(a, b)| a == *b);
            opens.then_some(len)
        });
        match modal {
            Some(len) => rest = &rest[len..],
            None => break,
        }
    }
    let Some((verb, tail)) = rest.split_first() else {
        return false;
    };
    let noun = tail.first().is_some_and(|next| {
        is_listed(NOUN_FOLLOWERS, next) || next.bytes().all(|b| b.is_ascii_digit())
    });
    is_listed(IMPERATIVES, verb) && !noun
}

/// The words of `text` (lower-cased): letters, digits and apostrophes.
fn words_of(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `line` gives the user a request or a permission, or opens with an imperative (also
/// after a label such as `Next step:`).
fn speaks_for_the_user(line: &str) -> bool {
    let text = unquoted(line);
    speaks(&text, &words_of(&text))
}

/// [`speaks_for_the_user`] of a line as [`unquoted`] gives its `text`, and that text's `words`.
fn speaks(text: &str, words: &[&str]) -> bool {
    // `Next step: delete …`: what follows a short label opens the line too.
    let after_label = text
        .split_once(':')
        .filter(|(label, _)| words_of(label).len() <= 3)
        .map(|(_, rest)| words_of(rest));
    attributed_to_the_user(text, words)
        || opens_with_an_order(words)
        || after_label.is_some_and(|rest| opens_with_an_order(&rest))
        || text.contains_text("do not ask")
        || PERMISSIONS
            .split('|')
            .any(|phrase| text.contains_text(phrase))
}

/// Whether the `words` of a line (outside what it quotes) name the user (`User: leave region 7
/// out`, `the user replied that …`): how an app records the user's own words in the reasoning.
fn names_the_user(words: &[&str]) -> bool {
    words.iter().any(|word| is_listed(USER_NOUNS, word))
}

/// The words of `line` that say what it is about: four letters or more, not common ones.
fn content_words(line: &str) -> Vec<String> {
    let text = line.to_ascii_lowercase();
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 4 && !is_listed(COMMON, w))
        .filter(|w| !listed(USER_VERBS).any(|verb| w.starts_with(verb)))
        .map(str::to_owned)
        .collect();
    words.dedup();
    words
}

/// The share of `words` that `text` (lower-cased) holds.
fn share_in(words: &[String], text: &str) -> f64 {
    let held = words
        .iter()
        .filter(|w| text.contains_text(w.as_str()))
        .count();
    held as f64 / words.len().max(1) as f64
}

/// The lines of `summary` that give the user words only the data of `selection` said (not the
/// goal or the pins of `ledger`), each with the entry it came from.
pub fn injected_lines(summary: &str, selection: &Selection, ledger: &Ledger) -> Vec<Injection> {
    // What a run gave back and what a tool fetched (not the code the agent wrote), and the
    // lines earlier summaries marked: each with its iteration and its name.
    let mut data: Vec<(u32, String, String)> = Vec::new();
    let mut add = |n: u32, log: &str, id: Option<&str>, text: &str| {
        let name = id.map_or(String::new(), |id| format!(" {id}"));
        let source = format!("{log}{name} (iteration {n})");
        data.push((n, source, text.to_ascii_lowercase()));
    };
    for (n, entry) in &selection.execution {
        let id = entry.facts.id.as_deref();
        add(*n, "execution", id, &entry.fields().without_code());
    }
    for (n, entry) in &selection.tool_activity {
        add(*n, "tool activity", entry.facts.id.as_deref(), entry.json());
    }
    for (n, entry) in &selection.reasoning {
        for line in entry.lines().filter(|line| line.ends_with(INJECTED_MARK)) {
            add(*n, "an earlier summary's line from tool output", None, line);
        }
    }
    // The data entry of iteration `until` or earlier that holds most of `words`, if one holds
    // enough.
    let from_data = |words: &[String], until: u32| {
        data.iter()
            .filter(|(n, _, _)| *n <= until)
            .map(|(_, name, text)| (share_in(words, text), name))
            .filter(|(share, _)| *share >= FROM_DATA)
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    // The lines that give the user words some data entry holds.
    let mut candidates = Vec::new();
    for line in summary.lines() {
        if heading_section(line).is_some() || line.ends_with(INJECTED_MARK) {
            continue;
        }
        if !speaks_for_the_user(line) {
            continue;
        }
        let words = content_words(line);
        if words.len() < 2 {
            continue;
        }
        if let Some((_, name)) = from_data(&words, u32::MAX) {
            candidates.push((line, words, name));
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    // The user's words: the goal, the pins, and what the agent's reasoning recorded the user
    // asking for before any data said it (data of the same iteration may have said it first).
    // Read only when a line needs them: the reasoning can be megabytes.
    let mut users = String::new();
    for fact in &ledger.facts {
        if matches!(fact.kind, FactKind::Goal | FactKind::Pin) {
            users.push_str(&fact.text.to_ascii_lowercase());
            users.push('\n');
        }
    }
    for (n, entry) in &selection.reasoning {
        // An earlier summary's lines are the user's only where they speak for the user; the
        // app's own records, wherever they name the user.
        let summary = parse_summary_header(entry).is_some();
        for line in entry.lines().filter(|line| !line.ends_with(INJECTED_MARK)) {
            let text = unquoted(line);
            let words = words_of(&text);
            // The app's record of what the user wrote comes before its iteration's data: the
            // user's, whatever that data says after it.
            let recorded = !summary && line.trim_start().starts_with(USER_WROTE);
            let the_users = (!summary && names_the_user(&words)) || speaks(&text, &words);
            if recorded || (the_users && from_data(&content_words(line), *n).is_none()) {
                users.push_str(&line.to_ascii_lowercase());
                users.push('\n');
            }
        }
    }
    candidates
        .into_iter()
        .filter(|(_, words, _)| share_in(words, &users) < FROM_DATA)
        .map(|(line, _, name)| Injection {
            line: line.trim_end().to_owned(),
            source: name.clone(),
        })
        .collect()
}

/// `summary` with each of `injected`'s lines ending in [`INJECTED_MARK`]; nothing else changes.
pub fn mark_injected(summary: &str, injected: &[Injection]) -> String {
    if injected.is_empty() {
        return summary.to_owned();
    }
    let mut marked: Vec<&str> = injected.iter().map(|i| i.line.as_str()).collect();
    sort_unique(&mut marked);
    summary
        .lines()
        .map(|line| {
            if marked.binary_search(&line.trim_end()).is_ok() {
                format!("{}{INJECTED_MARK}", line.trim_end())
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .joined("\n")
}

#[cfg(test)]
mod tests;
