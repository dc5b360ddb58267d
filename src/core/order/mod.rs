//! Order without the standard library's generic machinery: the crate's one sort
//! ([`sort`]) and its one map ([`sorted_map`]). Each standard sort, tree or hash table is
//! copied into the module once per element type; these are small enough that their copies do
//! not count.

pub mod sort;
pub mod sorted_map;
