//! The archived results of a call or a turn, as the app gave them: the messages that held
//! them, exactly (`store::originals`), from the oldest archive that keeps them — a clearing's,
//! taken before any placeholder, or the summary's that folded the turn whole.

use crate::core::error::StorageError;
use crate::core::messages::shape::Shape;
use crate::core::ports::clock::Clock;
use crate::core::ports::storage::KeyValueStore;
use crate::core::store::archives::StoredArchives;
use crate::core::store::originals::pairs;

/// What `recall` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The call with this id.
    Call(String),
    /// Every call of this turn (from 0).
    Turn(u32),
}

impl Asked {
    /// Whether message `json` of `shape`, of iteration `n`, holds a result asked for. A call
    /// the shape gives no id is asked for by the id the front made (`name#iteration.k`).
    fn holds(&self, shape: Shape, n: u32, json: &str) -> bool {
        let Some(read) = shape.read(json) else {
            return false;
        };
        read.results
            .iter()
            .any(|result| match (self, &result.call_id) {
                (Asked::Turn(turn), _) => n == turn + 1,
                (Asked::Call(id), Some(call)) => call == id,
                (Asked::Call(id), None) => {
                    let name = result.name.as_deref().unwrap_or_default();
                    id.starts_with(&format!("{name}#{n}."))
                }
            })
    }
}

/// The result messages (a JSON array) of what `asked` names, read from `archives`: empty
/// when none is archived (the list still holds them).
pub fn recalled_results<S: KeyValueStore, C: Clock>(
    archives: &StoredArchives<'_, S, C>,
    shape: Shape,
    asked: &Asked,
) -> Result<String, StorageError> {
    let (heads, _) = archives.heads(None)?;
    let mut found = String::from("[");
    // Oldest first: the first archive that holds them has them as the app gave them.
    for head in heads.iter().rev() {
        if matches!(asked, Asked::Turn(turn) if !head.iterations.contains(&(turn + 1))) {
            continue;
        }
        let originals = archives.read_stored(&head.key)?.and_then(|a| a.originals);
        for (n, message) in pairs(originals.as_ref().map_or("", |o| o.get())) {
            if asked.holds(shape, n, message) {
                if found.len() > 1 {
                    found.push(',');
                }
                found.push_str(message);
            }
        }
        if found.len() > 1 {
            break;
        }
    }
    found.push(']');
    Ok(found)
}
