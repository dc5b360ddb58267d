//! What the message front tells the app, in turns and call ids: a compaction's report and a
//! plan's. Turns count from 0 at the first turn of the list's first compaction (the core's
//! iteration `n` is turn `n - 1`).

use crate::core::json::record::json_record;
use crate::core::messages::front::MessageCompaction;
use crate::core::model::clearing::ClearedBody;
use crate::core::model::facts::{Coverage, Injection};
use crate::core::model::outcome::CompactionPlan;
use crate::core::model::user_items::UserItems;

/// A tool result the clearing rung moved to an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearedCall {
    /// Its turn.
    pub turn: u32,
    /// The call's id (`null` when it has none).
    pub call_id: Option<String>,
    /// Tokens the list lost.
    pub tokens: usize,
}

json_record! {
    write ClearedCall {
        turn: "turn" req,
        call_id: "callId" null,
        tokens: "tokens" req,
    }
}

/// The turn of iteration `n`.
fn turn(n: u32) -> u32 {
    n.saturating_sub(1)
}

fn cleared_calls(cleared: &[ClearedBody]) -> Vec<ClearedCall> {
    cleared
        .iter()
        .map(|body| ClearedCall {
            turn: turn(body.iteration),
            call_id: Some(body.entry_id.clone()).filter(|id| !id.is_empty()),
            tokens: body.tokens,
        })
        .collect()
}

/// `MessageCompaction` less its `messages` (the list, which the boundary adds).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageReport {
    /// `none`, `clear`, `summarize` or `fallback`.
    pub rung: &'static str,
    /// Whether this call compacted anything new (else the list came back as it was).
    pub compacted: bool,
    /// The summary message's text, when one was written.
    pub summary: Option<String>,
    /// The results cleared.
    pub cleared: Vec<ClearedCall>,
    /// First and last turn folded into the summary.
    pub turns: Option<[u32; 2]>,
    /// The archive holding the originals.
    pub archive_key: Option<String>,
    /// Tokens before.
    pub tokens_before: usize,
    /// Tokens after.
    pub tokens_after: usize,
    /// The facts the summary had to keep, and which it kept.
    pub coverage: Option<Coverage>,
    /// The lines marked as giving the user words only tool output said.
    pub injections: Vec<Injection>,
    /// What the summary did with the user's items (none when no summary was written).
    pub user_items: Option<UserItems>,
}

json_record! {
    write MessageReport {
        rung: "rung" req,
        compacted: "compacted" req,
        summary: "summary" null,
        cleared: "cleared" req,
        turns: "turns" null,
        archive_key: "archiveKey" null,
        tokens_before: "tokensBefore" req,
        tokens_after: "tokensAfter" req,
        coverage: "coverage" null,
        injections: "injections" req,
        user_items: "userItems" null,
    }
}

impl MessageReport {
    /// Nothing was due: the list stays, `tokens` of it.
    pub fn nothing(tokens: usize) -> Self {
        MessageReport {
            rung: "none",
            compacted: false,
            summary: None,
            cleared: Vec::new(),
            turns: None,
            archive_key: None,
            tokens_before: tokens,
            tokens_after: tokens,
            coverage: None,
            injections: Vec::new(),
            user_items: None,
        }
    }

    /// The report of a compaction of a list: what it made, or [`MessageReport::nothing`]
    /// when the list came back as it was (a compaction that made nothing new of it).
    pub fn of(done: &MessageCompaction) -> Self {
        let result = &done.result;
        if !done.compacted {
            return MessageReport::nothing(result.tokens_before);
        }
        MessageReport {
            rung: result.rung.as_str(),
            compacted: true,
            summary: done.summary.clone(),
            cleared: cleared_calls(&result.cleared),
            turns: done.turns.map(|[first, last]| [turn(first), turn(last)]),
            archive_key: Some(result.archive_key.clone()).filter(|key| !key.is_empty()),
            tokens_before: result.tokens_before,
            tokens_after: result.tokens_after,
            coverage: done.summary.is_some().then(|| result.coverage.clone()),
            injections: result.injections.clone(),
            user_items: done.summary.is_some().then(|| result.user_items.clone()),
        }
    }
}

/// `MessagePlan`: what `compact(messages)` would do now, with no call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagePlan {
    /// `none`, `clear` or `summarize`.
    pub rung: &'static str,
    /// First and last turn a summary would fold.
    pub turns: Option<[u32; 2]>,
    /// The results a clearing would move.
    pub cleared: Vec<ClearedCall>,
    /// Tokens now.
    pub tokens_before: usize,
    /// Tokens after, estimated.
    pub estimated_tokens_after: usize,
}

json_record! {
    write MessagePlan {
        rung: "rung" req,
        turns: "turns" null,
        cleared: "cleared" req,
        tokens_before: "tokensBefore" req,
        estimated_tokens_after: "estimatedTokensAfter" req,
    }
}

impl MessagePlan {
    /// The plan of `plan` over logs of `tokens`; `due` says whether the loop's compaction
    /// would run now.
    pub fn of(plan: &CompactionPlan, tokens: usize, due: bool) -> Self {
        let rung = if due && plan.refused.is_none() {
            plan.rung.as_str()
        } else {
            "none"
        };
        let summarises = rung != "none" && rung != "clear";
        MessagePlan {
            rung,
            turns: summarises.then(|| [turn(plan.iterations[0]), turn(plan.iterations[1])]),
            cleared: if rung == "none" {
                Vec::new()
            } else {
                cleared_calls(&plan.cleared)
            },
            tokens_before: tokens,
            estimated_tokens_after: if rung == "none" {
                tokens
            } else {
                plan.estimated_tokens_after
            },
        }
    }
}
