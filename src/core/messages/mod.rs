//! The message front (wing 10): an agent whose state is a message list (Gemini `contents`,
//! OpenAI chat, Anthropic Messages, the AI SDK's `ModelMessage[]`) compacted by the same steps
//! as the logs of a `LogStore`. A list is read as turns ([`conversation`]), written into the
//! core's logs ([`logs`]), compacted by the core's compactor, and read back as the list to send
//! ([`rebuild`]): the app's own messages wherever nothing changed.

pub mod conversation;
pub mod front;
pub mod logs;
pub mod rebuild;
pub mod recalled;
pub mod report;
pub mod rollback;
pub mod shape;
pub mod stitch;
pub mod wording;
pub mod write;
