//! The ledger of must-keep facts: drawn from iterations 1..N-1 before the provider is called,
//! listed in the prompt, and checked in the summary. A fact is the session's goal, the final
//! result of a computation, a failure no later iteration resolved, an identifier iteration N
//! still refers to, a fact the app pinned, or a fact an earlier summary was required to keep.

use crate::core::order::join::Joined;
use std::borrow::Cow;

use crate::core::model::facts::{
    Carried, Coverage, Demoted, Fact, FactKind, IndexLine, Ledger, Pin,
};
use crate::core::order::sort::sort_unique;
use crate::core::steps::digest::text::{clip, cut_whole, first_sentence};
use crate::core::steps::digest::Digest;
use crate::core::steps::selection::Selection;
use crate::core::steps::term_search::{HoldsTerms, TermScan, TermsFound};
pub use crate::core::steps::terms::Normalised;
use crate::core::steps::terms::{
    each_candidate, every_number_in, execution_text, identifiers_in, numbers_in, quoted_in,
    reasoning_text, tool_text, without_digit_commas, MAX_TOKEN_LEN,
};
use crate::core::steps::tiers::{archived_terms, Candidates, FactBudget, Rank};
use crate::core::steps::user_words::task_of;

impl Fact {
    /// Whether `summary` keeps this fact: every exact term, and half its key words — every
    /// one of a pin's (the app's or the user's own words, which another line sharing an id
    /// and some words does not keep).
    pub fn kept_in(&self, summary: &dyn HoldsTerms) -> bool {
        let exact = self.exact.iter().all(|term| summary.has_exact(term));
        let found = self
            .words
            .iter()
            .filter(|word| summary.has_word(word))
            .count();
        let needed = match self.kind {
            FactKind::Pin => self.words.len(),
            _ => self.words.len().div_ceil(2),
        };
        exact && found >= needed
    }

    /// Which of `facts` `text` keeps, `text` read once whatever the number of facts.
    pub fn each_kept_in(facts: &[Fact], text: &str) -> TermsFound {
        Fact::scan_for(&[facts], text).whole()
    }

    /// [`Fact::each_kept_in`] in parts (see [`TermScan`]), of the facts of every group.
    pub fn scan_for(groups: &[&[Fact]], text: &str) -> TermScan {
        let (mut exact, mut words): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        for fact in groups.iter().flat_map(|facts| facts.iter()) {
            exact.extend(fact.exact.iter().map(String::as_str));
            words.extend(fact.words.iter().map(String::as_str));
        }
        TermScan::new(Normalised::of(text), &exact, &words)
    }

    /// The fact on one line, as a summary's bullet states it.
    pub fn one_line(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().joined(" ")
    }

    /// A fact shown as `text` whose terms are drawn from `content` (the text without its
    /// label). The app's own words (a pin, the goal) keep every number, identifier and quoted
    /// string exactly, whatever its length (`350 ms`, `port 443`, `3 retries`, `0.2`).
    fn text_fact(id: String, kind: FactKind, text: String, content: &str) -> Fact {
        let exact = if matches!(kind, FactKind::Pin | FactKind::Goal) {
            let mut exact = identifiers_in(content);
            for term in every_number_in(content)
                .into_iter()
                .chain(quoted_in(content))
            {
                if !exact.contains(&term) {
                    exact.push(term);
                }
            }
            exact
        } else {
            identifiers_in(content)
                .into_iter()
                .take(MAX_EXACT)
                .collect()
        };
        let words = key_words(content);
        Fact {
            id,
            kind,
            text,
            exact,
            words,
            iterations: None,
        }
    }
}

/// At most this many identifiers of iteration N are required (the first it mentions).
pub const MAX_IDENTIFIERS: usize = 12;
/// At most this many exact terms per fact.
const MAX_EXACT: usize = 6;
/// At most this many key words per text fact.
const MAX_WORDS: usize = 6;
/// Characters of a value or message a fact's text shows.
const SHOWN_CHARS: usize = 160;

impl Ledger {
    /// Draws the ledger of `selection` within `budget` (see [`Drawn::of`] and
    /// [`Drawn::bound`]).
    pub fn draw(
        selection: &Selection,
        digest: &Digest,
        pins: &[Pin],
        carried: &Carried,
        budget: &FactBudget,
    ) -> Ledger {
        let drawn = Drawn::of(selection, digest, pins, carried);
        let index = &carried.index;
        drawn
            .bound(budget, selection, index, None)
            .unwrap_or_else(|| {
                let archived = drawn.archived_in(selection);
                let bound = drawn.bound(budget, selection, index, Some(&archived));
                bound.unwrap_or_default()
            })
    }

    /// The facts that leave the summary, held by the archive under `key`; a fact whose
    /// iterations are unknown is placed in `range` (the compacted iterations).
    pub fn demoted_in(&self, key: &str, range: [u32; 2]) -> Vec<Demoted> {
        self.demoted
            .iter()
            .map(|fact| Demoted {
                fact: fact.text.clone(),
                iterations: fact.iterations.unwrap_or(range),
                archive_key: key.to_owned(),
            })
            .collect()
    }

    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// The facts' texts, in order.
    pub fn texts(&self) -> Vec<String> {
        self.facts.iter().map(|fact| fact.text.clone()).collect()
    }

    /// Which facts `summary` kept and which it lost.
    pub fn coverage(&self, summary: &str) -> Coverage {
        let normalised = Normalised::of(summary);
        let mut coverage = Coverage {
            required: self.texts(),
            ..Coverage::default()
        };
        for fact in &self.facts {
            if fact.kept_in(&normalised) {
                coverage.kept.push(fact.text.clone());
            } else {
                coverage.missing.push(fact.text.clone());
            }
        }
        coverage
    }

    /// The facts `summary` lost.
    pub fn missing_in<'a>(&'a self, summary: &str) -> Vec<&'a Fact> {
        let normalised = Normalised::of(summary);
        // A pin stands on a line of its own: its words spread over several lines are other
        // statements.
        let on_a_line =
            |fact: &Fact| (summary.lines()).any(|line| fact.kept_in(&Normalised::of(line)));
        self.facts
            .iter()
            .filter(|fact| match fact.kind {
                FactKind::Pin => !on_a_line(fact),
                _ => !fact.kept_in(&normalised),
            })
            .collect()
    }
}

fn goal(digest: &Digest) -> Option<Fact> {
    let (text, content) = match &digest.query {
        Some(query) => {
            let content = clip(&task_of(query), SHOWN_CHARS);
            (format!("Question: {content}"), content)
        }
        None => {
            let (n, first) = digest.reasoning.first()?;
            let content = clip(first_sentence(first), SHOWN_CHARS);
            (format!("Goal (iteration {n}): {content}"), content)
        }
    };
    Some(Fact::text_fact(
        "goal".into(),
        FactKind::Goal,
        text,
        &content,
    ))
}

/// The last successful run of each task that returned a value.
fn results(digest: &Digest) -> Vec<Fact> {
    let mut seen: Vec<&str> = Vec::new();
    let mut facts = Vec::new();
    for run in digest.runs.iter().rev() {
        let (Some(true), Some(value)) = (run.success, run.result.as_deref()) else {
            continue;
        };
        if seen.contains(&run.task.as_str()) {
            continue;
        }
        seen.push(&run.task);
        let shown = cut_whole(value, SHOWN_CHARS);
        let numbers: Vec<String> = numbers_in(&shown).into_iter().take(MAX_EXACT).collect();
        let what = run
            .id
            .clone()
            .unwrap_or_else(|| format!("`{}`", clip(&run.task, 60)));
        let value_term = shown.trim().trim_matches('"').to_owned();
        let (exact, words) = if !numbers.is_empty() {
            (numbers, Vec::new())
        } else if value_term.chars().count() <= 40 && !value_term.is_empty() {
            (vec![value_term], Vec::new())
        } else {
            (Vec::new(), key_words(&shown))
        };
        facts.push(Fact {
            id: format!("result:{}", run.task),
            kind: FactKind::Result,
            text: format!(
                "Result of {what} (iteration {}, task {}): {shown}",
                run.iteration,
                clip(&run.task, 60)
            ),
            exact,
            words,
            iterations: Some([run.iteration, run.iteration]),
        });
    }
    facts.reverse();
    facts
}

fn open_failures(digest: &Digest) -> Vec<Fact> {
    digest
        .failures
        .iter()
        .filter(|failure| failure.resolved_in.is_none())
        .map(|failure| {
            let message = clip(&failure.message, SHOWN_CHARS);
            let (task, named) = digest.failed(failure);
            let text = format!(
                "Still failing (iteration {}): {named} → {message}",
                failure.iteration
            );
            let exact = if failure.subject == "iteration" {
                Vec::new()
            } else {
                vec![failure.subject.clone()]
            };
            Fact {
                id: format!("failure:{task}"),
                kind: FactKind::Failure,
                text,
                exact,
                words: key_words(&message),
                iterations: Some([failure.iteration, failure.iteration]),
            }
        })
        .collect()
}

/// The failure ids this range resolved (a later success of the task, or of the operation).
fn resolved_subjects(digest: &Digest) -> Vec<String> {
    let mut resolved: Vec<String> = digest
        .runs
        .iter()
        .filter(|run| run.success == Some(true))
        .map(|run| format!("failure:{}", run.task))
        .collect();
    resolved.extend(
        digest
            .tool_successes
            .iter()
            .map(|(_, subject)| format!("failure:{subject}")),
    );
    resolved
}

/// The facts a ledger is drawn from, before its budget: `carried` (the facts earlier
/// summaries had to keep, as their archives recorded them), then the goal, final results, open
/// failures, identifiers iteration N refers to, and the pins. A newer result of the same task
/// replaces a carried one; a carried failure a later iteration resolved leaves.
pub struct Drawn {
    facts: Vec<Fact>,
    leaving: Vec<Fact>,
    /// The identifiers iteration N refers to, each with the iteration that named it.
    referenced: Vec<(String, u32)>,
    /// The last iteration of the selection.
    newest: u32,
}

impl Drawn {
    /// The facts of `selection`, as its `digest` read them, with `pins` and `carried`.
    pub fn of(selection: &Selection, digest: &Digest, pins: &[Pin], carried: &Carried) -> Drawn {
        let referenced = referenced_identifiers(selection);
        Drawn::with(referenced, selection, digest, pins, carried)
    }

    /// [`Drawn::of`], the identifiers iteration N refers to read already
    /// ([`referenced_identifiers`]).
    pub fn with(
        referenced: Vec<(String, u32)>,
        selection: &Selection,
        digest: &Digest,
        pins: &[Pin],
        carried: &Carried,
    ) -> Drawn {
        let mut drawn = Vec::new();
        if let Some(goal) = goal(digest) {
            drawn.push(goal);
        }
        drawn.extend(results(digest));
        drawn.extend(open_failures(digest));
        drawn.extend(referenced.iter().map(|(token, n)| Fact {
            id: format!("identifier:{token}"),
            kind: FactKind::Identifier,
            text: format!(
                "`{token}`: named in iteration {n}, still in use at iteration {}",
                selection.current
            ),
            exact: vec![token.clone()],
            words: Vec::new(),
            iterations: Some([*n, *n]),
        }));
        let resolved = resolved_subjects(digest);
        let mut leaving = Vec::new();
        let mut facts: Vec<Fact> = Vec::new();
        for fact in carried
            .facts
            .iter()
            .filter(|fact| fact.kind != FactKind::Pin)
        {
            if fact.kind == FactKind::Failure && resolved.contains(&fact.id) {
                leaving.push(fact.clone());
            } else if fact.kind == FactKind::Goal || !drawn.iter().any(|new| new.id == fact.id) {
                facts.push(fact.clone());
            }
        }
        for fact in drawn {
            if !facts.iter().any(|f| f.id == fact.id) {
                facts.push(fact);
            }
        }
        for pin in pins {
            let text = pin.text.trim();
            facts.push(Fact::text_fact(
                format!("pin:{}", pin.id),
                FactKind::Pin,
                text.to_owned(),
                text,
            ));
        }
        Drawn {
            facts,
            leaving,
            referenced,
            newest: selection.last,
        }
    }

    /// What the archive of `selection` holds of these facts' terms.
    pub fn archived_in(&self, selection: &Selection) -> TermsFound {
        self.archived_scan(selection).whole()
    }

    /// [`Drawn::archived_in`] in parts.
    pub fn archived_scan(&self, selection: &Selection) -> TermScan {
        archived_terms(&[&self.facts, &self.leaving], selection)
    }

    /// The ledger within `budget` (see [`Candidates::bound`]), `carried_index` the earlier
    /// summary's index and `archived` what [`Drawn::archived_in`] found; `None` when a fact
    /// would leave and `archived` was not read.
    pub fn bound(
        &self,
        budget: &FactBudget,
        selection: &Selection,
        carried_index: &[IndexLine],
        archived: Option<&TermsFound>,
    ) -> Option<Ledger> {
        let Drawn {
            referenced, newest, ..
        } = self;
        let newest = *newest;
        // The app's own words always stay; then the newest iteration's results (the last to
        // leave, in a budget too small for them), open failures (within their share), the
        // identifiers iteration N refers to, results and aged identifiers, in that order, the
        // newest first.
        let rank = |fact: &Fact| match fact.kind {
            FactKind::Goal | FactKind::Pin => Rank::Always,
            FactKind::Result if fact.iterations.is_some_and(|[_, last]| last >= newest) => {
                Rank::Then(0)
            }
            FactKind::Failure => Rank::Then(1),
            FactKind::Identifier
                if referenced
                    .iter()
                    .any(|(token, _)| fact.exact.contains(token)) =>
            {
                Rank::Then(2)
            }
            FactKind::Result => Rank::Then(3),
            FactKind::Identifier => Rank::Then(4),
        };
        Candidates {
            facts: self.facts.clone(),
            leaving: self.leaving.clone(),
            rank: &rank,
            carried_index,
            archived,
        }
        .bound(budget, selection)
    }
}

/// Identifiers in iteration N's entries that iterations 1..N-1 also mention, in the order N
/// first mentions them, each with the first earlier iteration that mentions it. The earlier text is only scanned for N's identifiers (its own are never
/// collected), and the scan stops once every one is found.
pub fn referenced_identifiers(selection: &Selection) -> Vec<(String, u32)> {
    let mut scan = IdentifierScan::of(selection);
    while !scan.advance(selection, usize::MAX) {}
    scan.found()
}

/// [`referenced_identifiers`] a slice of the earlier text at a time, so that a caller sharing
/// the page can let it run between (at 736K tokens the whole scan was one task of 55 ms).
pub struct IdentifierScan {
    /// The identifiers iteration N names, in the order it names them.
    current: Vec<String>,
    /// Of those, the ones not found yet, sorted, so that each candidate of the earlier text is
    /// looked up in a few comparisons (an iteration whose tool entry holds a fetched page names
    /// hundreds); a BTreeSet would add to the package's size.
    wanted: Vec<String>,
    /// The first bytes and lengths of `wanted`: most tokens of the earlier text are rejected by
    /// them alone.
    first_bytes: [bool; 256],
    lengths: [bool; MAX_TOKEN_LEN + 1],
    /// Each identifier found, with the earlier iteration that mentions it first.
    found: Vec<(String, u32)>,
    /// The next entry to read: its log (0 reasoning, 1 execution, 2 tools, 3 done) and index.
    at: (usize, usize),
}

impl IdentifierScan {
    /// The scan of `selection`'s earlier text for the identifiers its kept iteration names.
    pub fn of(selection: &Selection) -> Self {
        let kept = &selection.kept;
        let mut current: Vec<String> = Vec::new();
        let mut add = |text: &str| {
            for token in identifiers_in(text) {
                if !current.contains(&token) {
                    current.push(token);
                }
            }
        };
        kept.reasoning.iter().for_each(|e| add(reasoning_text(e)));
        kept.execution.iter().for_each(|e| add(&execution_text(e)));
        kept.tool_activity.iter().for_each(|e| add(&tool_text(e)));
        let mut wanted = current.clone();
        sort_unique(&mut wanted);
        let mut first_bytes = [false; 256];
        let mut lengths = [false; MAX_TOKEN_LEN + 1];
        for token in &wanted {
            first_bytes[usize::from(token.as_bytes()[0])] = true;
            lengths[token.len().min(MAX_TOKEN_LEN)] = true;
        }
        IdentifierScan {
            current,
            wanted,
            first_bytes,
            lengths,
            found: Vec::new(),
            at: (0, 0),
        }
    }

    /// Reads about `bytes` more of the earlier text: whether the scan is complete.
    pub fn advance(&mut self, selection: &Selection, bytes: usize) -> bool {
        let mut read = 0;
        while read < bytes && !self.wanted.is_empty() {
            let (log, i) = self.at;
            let entry = match log {
                0 => selection
                    .reasoning
                    .get(i)
                    .map(|(n, e)| (*n, Cow::Borrowed(reasoning_text(e)))),
                1 => selection
                    .execution
                    .get(i)
                    .map(|(n, e)| (*n, Cow::Owned(execution_text(e)))),
                2 => selection
                    .tool_activity
                    .get(i)
                    .map(|(n, e)| (*n, Cow::Owned(tool_text(e)))),
                _ => return true,
            };
            let Some((n, text)) = entry else {
                self.at = (log + 1, 0);
                continue;
            };
            self.at.1 += 1;
            read += text.len();
            self.look(n, &text);
        }
        self.wanted.is_empty() || self.at.0 > 2
    }

    /// Takes the wanted identifiers `text`, of earlier iteration `n`, mentions.
    fn look(&mut self, n: u32, text: &str) {
        let text = without_digit_commas(text);
        let (wanted, found) = (&mut self.wanted, &mut self.found);
        let (first_bytes, lengths) = (&self.first_bytes, &self.lengths);
        each_candidate(&text, |token| {
            if first_bytes[usize::from(token.as_bytes()[0])]
                && token.len() <= MAX_TOKEN_LEN
                && lengths[token.len()]
            {
                if let Ok(at) = wanted.binary_search_by(|w| w.as_str().cmp(token)) {
                    found.push((wanted.remove(at), n));
                }
            }
        });
    }

    /// What the scan found: each identifier with the first earlier iteration that mentions it,
    /// in the order iteration N names them.
    pub fn found(self) -> Vec<(String, u32)> {
        let found = self.found;
        self.current
            .into_iter()
            .filter_map(|token| {
                let (_, n) = found.iter().find(|(t, _)| *t == token)?;
                Some((token, *n))
            })
            .take(MAX_IDENTIFIERS)
            .collect()
    }
}

const STOP_WORDS: [&str; 24] = [
    "about", "after", "again", "being", "could", "every", "first", "found", "their", "there",
    "these", "thing", "those", "through", "under", "until", "using", "where", "which", "while",
    "would", "should", "other", "before",
];

/// Up to six distinctive words of a text fact: five letters or more, not a common word.
fn key_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    // A word is letters, any non-ASCII character counting as one (no Unicode tables needed).
    for word in text.split(|c: char| c.is_ascii() && !c.is_ascii_alphabetic()) {
        let lower = word.to_ascii_lowercase();
        if lower.chars().count() >= 5
            && !STOP_WORDS.contains(&lower.as_str())
            && !words.contains(&lower)
        {
            words.push(lower);
        }
        if words.len() == MAX_WORDS {
            break;
        }
    }
    words
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
