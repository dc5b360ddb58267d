//! What the user said, as items every summary keeps: each statement of the user's words read
//! as a rule, a limit, a preference, a fact or the task's state (`steps::user_words` reads and
//! carries them).

use crate::core::json::record::{json_names, json_record};

/// The heading of the section of the user's words, which the package writes after the model's
/// sections and reads back from an earlier summary.
pub const USER_HEADING: &str = "### 👤 WHAT THE USER SAID (kept word for word, newest last)";

/// What kind of statement an item of the user's words is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserItemKind {
    /// What the agent must or must never do ("never run the deploy tool without …").
    Rule,
    /// A budget, a count, a deadline ("spend at most $900").
    Limit,
    /// How the user wants it ("answer in Welsh").
    Preference,
    /// A name, an id or a value the user gave ("the base commit is 4f2a…"); also a statement
    /// the reader cannot type (another language), kept whole.
    Fact,
    /// The task's state: what is done, what is next.
    Task,
}

json_names! {
    all UserItemKind {
        Rule = "rule",
        Limit = "limit",
        Preference = "preference",
        Fact = "fact",
        Task = "task",
    }
}

/// One statement of the user, as every later summary keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserItem {
    /// What kind of statement it is.
    pub kind: UserItemKind,
    /// The user's own words.
    pub text: String,
    /// Where the user said it: `turn 12`, `iteration 4`.
    pub source: String,
    /// The earlier statement this one replaced, in the compaction that replaced it.
    pub replaces: Option<String>,
}

/// What a compaction did with the user's items.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserItems {
    /// Every item the summary holds, in its section of the user's words.
    pub kept: Vec<UserItem>,
    /// Those of them the model's own sections did not state: the section alone holds them.
    pub repaired: Vec<UserItem>,
    /// Those that left the summary for a line that names them (over their share, see
    /// `user_items_over_budget`): one `recall` of their source away.
    pub demoted: Vec<UserItem>,
    /// Earlier items a later statement on the same subject replaced: no longer shown.
    pub replaced: Vec<UserItem>,
}

json_record! {
    read write UserItem {
        kind: "kind" req,
        text: "text" req,
        source: "source" req,
        replaces: "replaces" opt,
    }
}

json_record! {
    read write UserItems {
        kept: "kept" default,
        repaired: "repaired" default,
        demoted: "demoted" default,
        replaced: "replaced" default,
    }
}
