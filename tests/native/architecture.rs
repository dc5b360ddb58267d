//! ARCHITECTURE.md stays true: every Rust function, type, module path and source file it names
//! in backticks exists in `src/` (a renamed type or a removed function fails here, not in a
//! reader's head).
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ARCHITECTURE: &str = include_str!("../../ARCHITECTURE.md");

struct Source {
    files: Vec<(PathBuf, String)>,
}

impl Source {
    fn read() -> Self {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let files = common::files_under(&src)
            .into_iter()
            .filter_map(|path| Some((path.clone(), std::fs::read_to_string(path).ok()?)))
            .collect();
        Source { files }
    }

    /// Whether `text` defines `name`: a fn, type, trait, module, constant or macro, a JS class
    /// (`js_name`/`js_class`), or a TypeScript interface or type.
    fn defines(text: &str, name: &str) -> bool {
        let rust = [
            "fn", "struct", "enum", "trait", "type", "mod", "const", "static",
        ]
        .iter()
        .any(|kind| {
            text.match_indices(&format!("{kind} {name}"))
                .any(|(at, found)| !word_char(text[at + found.len()..].chars().next()))
        });
        rust || text.contains(&format!("macro_rules! {name} "))
            || text.contains(&format!("js_name = {name})"))
            || text.contains(&format!("js_class = {name})"))
            || text.contains(&format!("interface {name} "))
    }

    /// Whether some file of `src/` defines `name`.
    fn defined(&self, name: &str) -> bool {
        self.files.iter().any(|(_, text)| Self::defines(text, name))
    }

    /// The file of the module `path` of the core or the web layer (`store::shelf`).
    fn module(&self, path: &[&str]) -> Option<&str> {
        let base = match path.first() {
            Some(&"web") => PathBuf::from("src/web").join(path[1..].join("/")),
            _ => PathBuf::from("src/core").join(path.join("/")),
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        [base.with_extension("rs"), base.join("mod.rs")]
            .iter()
            .find_map(|candidate| {
                let full = root.join(candidate);
                self.files
                    .iter()
                    .find(|(file, _)| *file == full)
                    .map(|(_, text)| text.as_str())
            })
    }

    /// Whether the source file `name` (`shelf.rs`, `run/compactor/mod.rs`) exists.
    fn has_file(&self, name: &str) -> bool {
        self.files
            .iter()
            .any(|(file, _)| file.to_string_lossy().ends_with(&format!("/{name}")))
    }

    /// Why `token` (a backticked name of ARCHITECTURE.md) names nothing in `src/`, if it does.
    fn missing(&self, token: &str) -> Option<String> {
        let token = token.trim_end_matches("()");
        let token = token.strip_prefix("crate::core::").unwrap_or(token);
        if token.contains('/') {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let found = root.join(token).exists()
                || self
                    .files
                    .iter()
                    .any(|(file, _)| file.to_string_lossy().contains(&format!("/{token}")));
            return (!found).then(|| format!("no file {token}"));
        }
        if token.ends_with(".rs") {
            return (!self.has_file(token)).then(|| format!("no file {token}"));
        }
        if !token.contains("::") {
            let rusty = token.contains('_') && token == token.to_lowercase();
            let typed = token.starts_with(|c: char| c.is_ascii_uppercase())
                && token.chars().all(|c| c.is_ascii_alphanumeric())
                && token.chars().any(|c| c.is_ascii_lowercase());
            return ((rusty || typed) && !self.defined(token) && !self.mentioned(token))
                .then(|| format!("nothing defines {token}"));
        }
        // `wing::module::Item`, `wing::module::{A, B}`, `Type::method`.
        let (path, items) = match token.split_once("::{") {
            Some((path, items)) => (path, items.trim_end_matches('}').split(", ").collect()),
            None => {
                let (path, item) = token.rsplit_once("::").unwrap();
                (path, vec![item])
            }
        };
        let path: Vec<&str> = path.split("::").collect();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        if path[0] == "web" || root.join("src/core").join(path[0]).is_dir() {
            let module = (1..=path.len())
                .rev()
                .find_map(|n| self.module(&path[..n]).map(|text| (n, text)));
            let Some((n, text)) = module else {
                return Some(format!("no module {}", path.join("::")));
            };
            // A type in the module and a method of it anywhere (`Shelf::refreshed`).
            let named: Vec<&str> = path[n..]
                .iter()
                .copied()
                .chain(items.iter().copied())
                .collect();
            return match named.split_first() {
                Some((first, rest)) if Self::defines(text, first) => rest
                    .iter()
                    .find(|name| !self.defined(name))
                    .map(|name| format!("nothing defines {name} ({token})")),
                Some((first, _)) => {
                    Some(format!("{} does not define {first}", path[..n].join("::")))
                }
                None => None,
            };
        }
        // Another crate's name (`clippy::too_many_lines`) is one `src/` uses as written.
        let other_crate = path[0].starts_with(|c: char| c.is_ascii_lowercase());
        if other_crate && self.files.iter().any(|(_, text)| text.contains(token)) {
            return None;
        }
        path.iter()
            .chain(&items)
            .find(|name| !self.defined(name))
            .map(|name| format!("nothing defines {name} ({token})"))
    }

    /// Whether `name` is a name `src/` uses though it defines it elsewhere: a JSON name or
    /// event name (`"context_limit_error"`), a platform method it calls, a type it imports.
    fn mentioned(&self, name: &str) -> bool {
        self.files.iter().any(|(_, text)| {
            text.contains(&format!("\"{name}\""))
                || text.contains(&format!(".{name}("))
                || text
                    .match_indices(&format!("::{name}"))
                    .any(|(at, found)| !word_char(text[at + found.len()..].chars().next()))
                || text
                    .lines()
                    .any(|line| line.trim_start().starts_with("use ") && line.contains(name))
        })
    }
}

fn word_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The backticked names of `text`, split at arrows and commas outside braces.
fn backticked(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        if quoted.contains('\n') || quoted.contains(' ') && !quoted.contains("::{") {
            continue;
        }
        let name = quoted.split('(').next().unwrap_or(quoted);
        if name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:{}, ./".contains(c))
        {
            names.insert(name.to_owned());
        }
    }
    names
}

#[test]
fn every_rust_name_architecture_md_gives_exists_in_src() {
    let source = Source::read();
    let missing: Vec<String> = backticked(ARCHITECTURE)
        .iter()
        .filter_map(|name| source.missing(name))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what src/ lacks: {missing:#?}"
    );
}

#[test]
fn the_check_sees_a_renamed_type_a_removed_function_and_a_missing_file() {
    let source = Source::read();
    assert!(source.missing("store::shelf::Shelf").is_none());
    assert!(source.missing("store::archives::StoredArchives").is_none());
    assert!(source.missing("Shelf::refreshed").is_none());
    assert!(source
        .missing("error::{CompactionError, ErrorCode}")
        .is_none());
    assert!(source.missing("shelves.rs").is_none());
    assert!(source.missing("store::archives::Archives").is_some());
    assert!(source.missing("Compactor::compact_whenever").is_some());
    assert!(source.missing("compact_whenever").is_some());
    assert!(source.missing("recovery_calls.rs").is_some());
    assert!(source.missing("ShelfOfOldDays").is_some());
    assert!(source.missing("clippy::too_many_lines").is_none());
    assert!(source.missing("clippy::too_few_lines").is_some());
}
