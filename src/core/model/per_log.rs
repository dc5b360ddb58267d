//! One value for each of the three logs.

use crate::core::json::record::json_record;

/// One value for each log: the reasoning log, the execution log and the tool-activity log,
/// always in that order. Written as `{ reasoning, execution, toolActivity }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerLog<T> {
    /// Of the reasoning log.
    pub reasoning: T,
    /// Of the execution log.
    pub execution: T,
    /// Of the tool-activity log.
    pub tool_activity: T,
}

impl<T> PerLog<T> {
    /// The value `f` gives for each log's value, in log order.
    pub fn map<U>(self, mut f: impl FnMut(T) -> U) -> PerLog<U> {
        PerLog {
            reasoning: f(self.reasoning),
            execution: f(self.execution),
            tool_activity: f(self.tool_activity),
        }
    }

    /// As [`PerLog::map`], stopping at the first error.
    pub fn try_map<U, E>(self, mut f: impl FnMut(T) -> Result<U, E>) -> Result<PerLog<U>, E> {
        Ok(PerLog {
            reasoning: f(self.reasoning)?,
            execution: f(self.execution)?,
            tool_activity: f(self.tool_activity)?,
        })
    }

    /// Each log's value paired with its value in `other`.
    pub fn zip<U>(self, other: PerLog<U>) -> PerLog<(T, U)> {
        PerLog {
            reasoning: (self.reasoning, other.reasoning),
            execution: (self.execution, other.execution),
            tool_activity: (self.tool_activity, other.tool_activity),
        }
    }

    /// The values borrowed.
    pub fn as_ref(&self) -> PerLog<&T> {
        PerLog {
            reasoning: &self.reasoning,
            execution: &self.execution,
            tool_activity: &self.tool_activity,
        }
    }
}

json_record! {
    read write PerLog<T> {
        reasoning: "reasoning" req,
        execution: "execution" req,
        tool_activity: "toolActivity" req,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::read::from_text;
    use crate::core::json::write::to_json;

    #[test]
    fn map_zip_and_try_map_keep_the_log_order() {
        let counts = PerLog {
            reasoning: 1,
            execution: 2,
            tool_activity: 3,
        };
        let names = PerLog {
            reasoning: "r",
            execution: "e",
            tool_activity: "t",
        };
        let both = counts.zip(names).map(|(n, name)| format!("{name}{n}"));
        assert_eq!(
            to_json(&both),
            r#"{"reasoning":"r1","execution":"e2","toolActivity":"t3"}"#
        );
        assert_eq!(counts.as_ref().map(|n| n * 10).tool_activity, 30);
        let first_error = counts.try_map(|n| if n >= 2 { Err(n) } else { Ok(n) });
        assert_eq!(first_error, Err(2));
        let read: PerLog<u32> =
            from_text(r#"{"toolActivity":3,"execution":2,"reasoning":1}"#).unwrap();
        assert_eq!(read, counts.map(|n: i32| n as u32));
    }
}
