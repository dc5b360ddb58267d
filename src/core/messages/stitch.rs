//! A list given again from its start. An app that keeps its own list whole and sends what
//! `compact` returned for one request only (the AI SDK's `prepareStep`) gives, at the next
//! step, the list it gave last time and what came after it. The front then works on the list
//! it returned last time followed by that tail, so that no turn is cleared or folded twice;
//! a list that does not begin with what the last compaction was given is taken as it is.

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
        let n = self.given.len();
        (n > 0 && messages.len() >= n && messages[..n] == self.given[..]).then_some(n)
    }

    /// The list to work on: what the last compaction gave, then `messages` after what it was
    /// given (`messages` itself when it does not begin with that); and how many messages of
    /// `messages` the head replaced.
    pub fn stitch(&self, messages: &[String]) -> (Vec<String>, Option<usize>) {
        match self.covers(messages) {
            Some(n) => {
                let mut working = self.gave.clone();
                working.extend_from_slice(&messages[n..]);
                (working, Some(n))
            }
            None => (messages.to_vec(), None),
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
        assert_eq!(last.stitch(&texts(&["a", "b"])), (texts(&["a", "b"]), None));
        last.record(texts(&["a", "b", "c"]), texts(&["a", "S"]));
        assert_eq!(
            last.stitch(&texts(&["a", "b", "c", "d"])),
            (texts(&["a", "S", "d"]), Some(3))
        );
        // The list it gave back, grown, is a list of its own; so is another list.
        assert_eq!(last.stitch(&texts(&["a", "S", "d"])).1, None);
        assert_eq!(last.stitch(&texts(&["a", "x", "c", "d"])).1, None);
        assert_eq!(last.stitch(&texts(&["a", "b"])).1, None);
    }
}
