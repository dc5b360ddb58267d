//! The message the front writes, in each shape: a user's message (the summary's). Every other
//! message of the list is the app's own.

use crate::core::json::write::write_string;
use crate::core::messages::shape::Shape;

/// The user's message of `shape` that says `text` (the summary's message is one).
pub fn user_message(shape: Shape, text: &str) -> String {
    let mut out = String::new();
    match shape {
        Shape::Gemini => {
            out.push_str("{\"role\":\"user\",\"parts\":[{\"text\":");
            write_string(&mut out, text);
            out.push_str("}]}");
        }
        Shape::OpenAi | Shape::Anthropic | Shape::AiSdk => {
            out.push_str("{\"role\":\"user\",\"content\":");
            write_string(&mut out, text);
            out.push('}');
        }
    }
    out
}
