//! The archived results of a call or a turn, as messages of the list's shape (a turn's results
//! in one message where the shape holds them so): each result made again from its tool entry (the call's id, the tool's name, the body as the app
//! gave it), for an app that shows or sends an original the list no longer holds.

use crate::core::error::StorageError;
use crate::core::messages::logs::ToolEntry;
use crate::core::messages::shape::Shape;
use crate::core::messages::write::{result_part, results_message};
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::archives::StoredArchives;

/// What `recall` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The call with this id.
    Call(String),
    /// Every call of this turn (from 0).
    Turn(u32),
}

/// The result messages (a JSON array) of what `asked` names, read from `archives`: empty
/// when none is archived (the list still holds them whole).
pub fn recalled_results<S: KeyValueStore, C: Clock>(
    archives: &StoredArchives<'_, S, C>,
    shape: Shape,
    asked: &Asked,
) -> Result<String, StorageError> {
    let (range, query) = match asked {
        Asked::Call(id) => ((1, u32::MAX), vec![id.to_ascii_lowercase()]),
        Asked::Turn(turn) => ((turn + 1, turn + 1), Vec::new()),
    };
    let (found, _) = archives.entries_in(range.0, range.1, &query)?;
    // A turn's results in one message, as the list held them; calls of one id, each its own.
    let mut parts = String::new();
    for entry in found.iter().filter(|entry| entry.log == "tool activity") {
        let tool = ToolEntry::read(entry.body());
        if matches!(asked, Asked::Call(asked) if *asked != tool.id) {
            continue;
        }
        if let Some(details) = tool.details {
            if !parts.is_empty() {
                parts.push(',');
            }
            let part = result_part(shape, &tool.id, &tool.name, details, tool.error);
            match asked {
                Asked::Call(_) => parts.push_str(&results_message(shape, &part)),
                Asked::Turn(_) => parts.push_str(&part),
            }
        }
    }
    if matches!(asked, Asked::Turn(_)) && !parts.is_empty() {
        parts = results_message(shape, &parts);
    }
    Ok(format!("[{parts}]"))
}
