//! A list given again from its start. An app that keeps its own list whole and sends what
//! `compact` returned for one request only (the AI SDK's `prepareStep`, and its own history
//! across calls in `ai` 7) gives, at the next step, the list it gave last time and what came
//! after it. The front then works on the list it returned last time followed by that tail, so
//! that no turn is cleared or folded twice. A list that begins with what the last compaction
//! returned is worked on as it is, and stands, in the app's own terms, for what that compaction
//! was given followed by the same tail: a compaction of it is remembered in those terms, so the
//! app's own history, given next, is recognised too. Any other list is taken as it is.

/// A list given, as the front works on it (see [`LastCompaction::stitch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stitched {
    /// The list to work on.
    pub working: Vec<String>,
    /// How many messages at the head of the list given the last compaction's list replaced.
    pub head: Option<usize>,
    /// The list in the app's own terms, which a compaction of it is remembered by, where it
    /// is not `working` itself ([`Stitched::app`]).
    pub app: Option<Vec<String>>,
}

impl Stitched {
    /// The list in the app's own terms.
    pub fn app(&self) -> &[String] {
        self.app.as_deref().unwrap_or(&self.working)
    }
}

/// How many messages `head` holds, when `messages` begins with all of them (and has any).
fn begins_with(messages: &[String], head: &[String]) -> Option<usize> {
    let n = head.len();
    (n > 0 && messages.len() >= n && messages[..n] == *head).then_some(n)
}

/// What the last compaction that changed a list was given, and the list it gave back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LastCompaction {
    given: Vec<String>,
    gave: Vec<String>,
}

impl LastCompaction {
    /// How many messages at the head of `messages` the last compaction was given (all of
    /// them, in order), when `messages` begins with them.
    pub fn covers(&self, messages: &[String]) -> Option<usize> {
        begins_with(messages, &self.given)
    }

    /// The list to work on: what the last compaction gave, then `messages` after what it was
    /// given (`messages` itself when it does not begin with that); how many messages of
    /// `messages` the head replaced; and `messages` in the app's own terms where they differ
    /// from the list to work on (`messages` itself when stitched; what the last compaction was
    /// given, then the rest, where `messages` begins with what it gave).
    pub fn stitch(&self, messages: Vec<String>) -> Stitched {
        if let Some(n) = self.covers(&messages) {
            let mut working = self.gave.clone();
            working.extend_from_slice(&messages[n..]);
            return Stitched {
                working,
                head: Some(n),
                app: Some(messages),
            };
        }
        let app = begins_with(&messages, &self.gave).map(|m| {
            let mut app = self.given.clone();
            app.extend_from_slice(&messages[m..]);
            app
        });
        Stitched {
            working: messages,
            head: None,
            app,
        }
    }

    /// A compaction was given `given` (the app's list) and gave `gave`.
    pub fn record(&mut self, given: Vec<String>, gave: Vec<String>) {
        self.given = given;
        self.gave = gave;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn a_list_given_again_works_on_what_was_given_back_and_its_tail() {
        let mut last = LastCompaction::default();
        let stitched = |working: &[&str], head, app: Option<&[&str]>| Stitched {
            working: texts(working),
            head,
            app: app.map(texts),
        };
        let ab = stitched(&["a", "b"], None, None);
        assert_eq!(last.stitch(texts(&["a", "b"])), ab);
        last.record(texts(&["a", "b", "c"]), texts(&["a", "S"]));
        assert_eq!(
            last.stitch(texts(&["a", "b", "c", "d"])),
            stitched(&["a", "S", "d"], Some(3), Some(&["a", "b", "c", "d"]))
        );
        // The list it gave back, grown, is worked on as it is, and stands for the app's list.
        assert_eq!(
            last.stitch(texts(&["a", "S", "d"])),
            stitched(&["a", "S", "d"], None, Some(&["a", "b", "c", "d"]))
        );
        // Another list is taken as it is.
        let other = last.stitch(texts(&["a", "x", "c", "d"]));
        assert_eq!(other.app(), texts(&["a", "x", "c", "d"]));
        assert_eq!(last.stitch(texts(&["a", "b"])), ab);
    }
}
