//! JSON without a framework: the stored records, the options and the model's replies are read
//! as text spans and written field by field. Entries other code wrote are never rebuilt, only
//! sliced, so their bytes stay as stored.
//!
//! - [`scan`]: where a value ends, members and items as text, strings decoded;
//! - [`number`]: decimal text to `f64`, rounded as `JSON.parse` rounds it;
//! - [`read`]: [`read::FromJson`] with errors naming the field;
//! - [`mod@write`]: [`write::ToJson`], compact text in the order given;
//! - [`record`]: one table per record gives its field list, its reader and its writer.

pub mod number;
pub mod read;
pub mod record;
pub mod scan;
pub mod write;
