//! A compaction of a list undone. Once the core has put an archive back into the logs
//! (`Compactor::rollback`, which puts back the app's own messages a summary folded beside
//! them: `store::originals`), the list is read back: the lead without a summary message the
//! logs no longer hold, then each entry of the reasoning log in order — a turn the list still
//! has as the app's own messages with every restored body spliced back in, a turn or an older
//! summary the list no longer has as the messages the app gave, exactly.

use crate::core::log::iteration::{named_iteration, parse_summary_header};
use crate::core::messages::conversation::Conversation;
use crate::core::messages::logs::ToolEntry;
use crate::core::messages::rebuild::{rebuild_turn, Compacted, Out};
use crate::core::store::originals::pairs;

/// The list after the rollback of the compaction of `messages` (read as `conversation`): the
/// logs hold `reasoning` and `tools` (the tool log's JSON text) again, and `originals` (the
/// app's messages, `store::originals`' pairs).
pub fn rolled_back(
    conversation: &Conversation,
    messages: &[String],
    reasoning: &[String],
    tools: &str,
    originals: &str,
) -> Vec<Out> {
    let compacted = Compacted {
        summary: None,
        details: Compacted::details_of(&ToolEntry::all(tools)),
    };
    let originals = pairs(originals);
    let earlier = conversation.earlier.as_ref().map(|e| e.message);
    let mut out: Vec<Out> = conversation
        .lead
        .clone()
        .filter(|index| Some(*index) != earlier)
        .map(Out::Keep)
        .collect();
    for entry in reasoning {
        // A summary of ours is the app's records' iteration 0.
        let Some(n) = parse_summary_header(entry).map_or(named_iteration(entry), |_| Some(0))
        else {
            continue;
        };
        match conversation.turns.iter().find(|turn| turn.iteration == n) {
            Some(turn) => out.extend(rebuild_turn(turn, messages, &compacted)),
            None => out.extend(
                (originals.iter())
                    .filter(|(m, _)| *m == n)
                    .map(|(_, message)| Out::New((*message).to_owned())),
            ),
        }
    }
    out
}
