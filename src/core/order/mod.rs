//! Order and search without the standard library's generic machinery: the crate's one sort
//! ([`sort`]), its one map ([`sorted_map`]), its one join ([`join`]) and its one search for a
//! text in a text ([`text_search`]). Each standard sort, tree, hash table or join is copied
//! into the module once per element type, and the search for a `&str` brings a searcher of 3.4
//! KB; these are small enough that their copies do not count.

pub mod join;
pub mod sort;
pub mod sorted_map;
pub mod text_search;
