//! The core's wings stay load-bearing: this test reads `src/core` and fails on any import of a
//! wing its table does not allow (ARCHITECTURE.md prints the same table) and on any import
//! cycle between files, of `src/core` or of the web layer (`src/web`). It reads `use` lines and
//! `crate::core::…` (`crate::web::…`) paths as text; unit-test modules count too.
// Tests may use the standard library's sorts and maps (the house rules in clippy.toml are
// about the package's size).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each wing of `src/core`, bottom to top, with the wings it may import besides its own.
const WINGS: [(&str, &[&str]); 11] = [
    ("order", &[]),
    ("json", &["order"]),
    ("model", &["order", "json"]),
    ("error", &["order", "json", "model"]),
    ("log", &["order", "json", "model", "error"]),
    ("ports", &["order", "json", "model", "error"]),
    ("steps", &["order", "json", "model", "error", "log"]),
    (
        "store",
        &["order", "json", "model", "error", "log", "ports", "steps"],
    ),
    (
        "providers",
        &["order", "json", "model", "error", "log", "ports", "steps"],
    ),
    (
        "run",
        &[
            "order",
            "json",
            "model",
            "error",
            "log",
            "ports",
            "steps",
            "store",
            "providers",
        ],
    ),
    (
        "messages",
        &[
            "order",
            "json",
            "model",
            "error",
            "log",
            "ports",
            "steps",
            "store",
            "providers",
            "run",
        ],
    ),
];

/// Every `.rs` file under `dir`, as its path relative to `root` with `/` separators.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for path in common::files_under(dir) {
        if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under the root");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The module path of a file (`store/journal.rs` → `store::journal`, `error/mod.rs` → `error`).
fn module_of(file: &str) -> Vec<String> {
    let trimmed = file.strip_suffix(".rs").expect("a .rs file");
    let mut segments: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if segments.last().is_some_and(|s| s == "mod") {
        segments.pop();
    }
    segments
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.to_owned()];
    };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').expect("a closing brace")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.trim().is_empty())
        .flat_map(expand)
        .map(|rest| match rest.as_str() {
            "self" => prefix.to_owned(),
            _ if prefix.is_empty() => rest,
            _ => format!("{prefix}::{rest}"),
        })
        .collect()
}

/// The code of `text` without comments (line and doc comments; the core has no block ones).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths (below `core`) that `text`, the code of the module `module`, refers to:
/// every `use crate::core::…`, `use super::…` and `use self::…` tree, and every inline
/// `crate::core::…` path; `root` is the folder below `src` the module is in (`core` or `web`).
fn references(text: &str, module: &[String], root: &str) -> Vec<Vec<String>> {
    let prefix = format!("crate::{root}::");
    let code = code_of(text);
    let mut paths = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let line = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        let Some(start) = line.strip_prefix("use ") else {
            continue;
        };
        let mut statement = start.to_owned();
        while !statement.contains(';') {
            match lines.next() {
                Some(more) => statement.push_str(more),
                None => break,
            }
        }
        let tree = statement.split(';').next().unwrap_or_default();
        for path in expand(tree) {
            let segments: Vec<&str> = path.split("::").map(str::trim).collect();
            let resolved: Option<Vec<String>> = match segments.first() {
                Some(&"crate") if segments.get(1) == Some(&root) => {
                    Some(segments[2..].iter().map(|s| (*s).to_owned()).collect())
                }
                Some(&"super") => {
                    let mut base = module.to_vec();
                    let mut tail = &segments[..];
                    while tail.first() == Some(&"super") {
                        base.pop();
                        tail = &tail[1..];
                    }
                    base.extend(tail.iter().map(|s| (*s).to_owned()));
                    Some(base)
                }
                Some(&"self") => {
                    let mut base = module.to_vec();
                    base.extend(segments[1..].iter().map(|s| (*s).to_owned()));
                    Some(base)
                }
                _ => None,
            };
            paths.extend(resolved);
        }
    }
    let mut inline = code.as_str();
    while let Some(at) = inline.find(&prefix) {
        let tail = &inline[at + prefix.len()..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        // `crate::core::x::{…}` is the head of a use tree, read above.
        if !tail[end..].starts_with('{') {
            let path = tail[..end].split("::").filter(|s| !s.is_empty());
            paths.push(path.map(str::to_owned).collect());
        }
        inline = &tail[end..];
    }
    paths
}

/// The file a module path lands in: the longest prefix of it that is a module of `files`.
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).cloned())
}

/// Every file of `src/core` and the files each imports (itself and its own submodules'
/// declarations aside).
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    import_graph_of("core")
}

/// Every file of `src/<tree>` and the files of that tree each imports.
fn import_graph_of(tree: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(tree);
    let mut names = Vec::new();
    rust_files(&root, &root, &mut names);
    let files: BTreeMap<Vec<String>, String> = names
        .iter()
        .map(|file| (module_of(file), file.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &names {
        let text = std::fs::read_to_string(root.join(file)).expect("a readable source file");
        let module = module_of(file);
        let imported: BTreeSet<String> = references(&text, &module, tree)
            .iter()
            .filter_map(|path| file_of(path, &files))
            .filter(|target| target != file)
            .collect();
        graph.insert(file.clone(), imported);
    }
    graph
}

/// The wing of a file: its first folder, or the file itself at the top (`mod.rs` is the core).
fn wing_of(file: &str) -> &str {
    file.split('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".rs")
}

/// Where `file` may not import `target` from: the wing rule it breaks, if any.
fn forbidden(file: &str, target: &str) -> Option<String> {
    let (from, to) = (wing_of(file), wing_of(target));
    if from == to || from == "mod" {
        return None;
    }
    let allowed = WINGS
        .iter()
        .find(|(wing, _)| *wing == from)
        .map(|(_, allowed)| *allowed);
    match allowed {
        None => Some(format!(
            "{file} is in no wing of the table (add its folder to WINGS and ARCHITECTURE.md)"
        )),
        Some(allowed) if !allowed.contains(&to) => Some(format!(
            "{file} imports {target}: the {from} wing may import only {allowed:?}"
        )),
        Some(_) => None,
    }
}

/// The files that import each other in a circle, each circle once (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, file: &'g str) {
            let n = self.index.len();
            self.index.insert(file, n);
            self.low.insert(file, n);
            self.stack.push(file);
            self.on_stack.insert(file);
            for target in self.graph.get(file).into_iter().flatten() {
                let target = target.as_str();
                if !self.index.contains_key(target) {
                    self.visit(target);
                    let low = self.low[file].min(self.low[target]);
                    self.low.insert(file, low);
                } else if self.on_stack.contains(target) {
                    let low = self.low[file].min(self.index[target]);
                    self.low.insert(file, low);
                }
            }
            if self.low[file] == self.index[file] {
                let mut circle = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    circle.push(member.to_owned());
                    if member == file {
                        break;
                    }
                }
                if circle.len() > 1 {
                    circle.sort();
                    self.found.push(circle);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for file in graph.keys() {
        if !walk.index.contains_key(file.as_str()) {
            walk.visit(file);
        }
    }
    walk.found
}

#[test]
fn every_import_goes_down_the_wing_table() {
    let graph = import_graph();
    let broken: Vec<String> = graph
        .iter()
        .flat_map(|(file, targets)| targets.iter().filter_map(move |t| forbidden(file, t)))
        .collect();
    assert!(
        broken.is_empty(),
        "imports the wing table forbids:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let found = cycles(&import_graph());
    assert!(found.is_empty(), "import cycles between files: {found:?}");
}

#[test]
fn no_files_of_the_web_layer_import_each_other_in_a_circle() {
    let graph = import_graph_of("web");
    // The graph is read: the web layer's classes reach its shelves.
    assert!(graph["archives.rs"].contains("shelves.rs"), "{graph:?}");
    let found = cycles(&graph);
    assert!(
        found.is_empty(),
        "import cycles between files of src/web: {found:?}"
    );
}

#[test]
fn the_core_re_exports_nothing_so_every_use_line_names_its_wing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/mod.rs");
    let text = code_of(&std::fs::read_to_string(root).expect("src/core/mod.rs"));
    let declared: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|name| name.trim_end_matches(';'))
        .collect();
    assert!(
        !text.contains("pub use"),
        "core/mod.rs re-exports: use wing paths"
    );
    let mut wings: Vec<&str> = WINGS.iter().map(|(wing, _)| *wing).collect();
    wings.sort_unstable();
    let mut declared_sorted = declared.clone();
    declared_sorted.sort_unstable();
    assert_eq!(
        declared_sorted, wings,
        "the wings of core/mod.rs and of the table differ"
    );
}

#[test]
fn the_reader_sees_imports_of_every_shape() {
    let module = vec!["store".to_owned(), "journal".to_owned()];
    let text = "use crate::core::model::{facts::{Fact, Ledger}, phase::Phase};\n\
                use super::archives::Archives;\n\
                // use crate::core::run::compactor::Compactor;\n\
                fn f() { crate::core::log::tokens::estimate_tokens(\"\"); }";
    let found: Vec<String> = references(text, &module, "core")
        .into_iter()
        .map(|path| path.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "model::facts::Fact",
            "model::facts::Ledger",
            "model::phase::Phase",
            "store::archives::Archives",
            "log::tokens::estimate_tokens",
        ]
    );
    assert!(forbidden("store/journal.rs", "run/compactor/mod.rs").is_some());
    assert!(forbidden("run/compactor/mod.rs", "store/journal.rs").is_none());
    let circle = BTreeMap::from([
        ("a.rs".to_owned(), BTreeSet::from(["b.rs".to_owned()])),
        ("b.rs".to_owned(), BTreeSet::from(["a.rs".to_owned()])),
    ]);
    assert_eq!(
        cycles(&circle),
        [vec!["a.rs".to_owned(), "b.rs".to_owned()]]
    );
}

/// The table here and the one ARCHITECTURE.md prints say the same.
#[test]
fn architecture_md_prints_the_same_table() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    for (wing, allowed) in WINGS {
        let row = doc
            .lines()
            .find(|line| {
                line.starts_with(&format!("| `{wing}` "))
                    || line.starts_with(&format!("| `{wing}/` "))
            })
            .unwrap_or_else(|| panic!("ARCHITECTURE.md has no row for the {wing} wing"));
        let cell = row.split('|').nth(2).unwrap_or_default();
        let listed: BTreeSet<&str> = cell
            .split(',')
            .map(|name| name.trim().trim_matches('`').trim_end_matches('/'))
            .filter(|name| !name.is_empty() && *name != "—")
            .collect();
        let expected: BTreeSet<&str> = allowed.iter().copied().collect();
        assert_eq!(listed, expected, "the {wing} row of ARCHITECTURE.md");
    }
}

/// Lines of a file of `src/core`, relative to the crate root.
fn lines_of(file: &str) -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .lines()
        .count()
}

/// The orchestrator stays small: its handle under 200 lines (it grew back to 318 once, with
/// the archive plumbing that now lives in `store/shelf.rs`).
#[test]
fn the_orchestrators_handle_stays_under_its_line_budget() {
    let lines = lines_of("src/core/run/compactor/mod.rs");
    assert!(
        lines < 200,
        "src/core/run/compactor/mod.rs has {lines} lines; the budget is under 200"
    );
}

/// ARCHITECTURE.md's "who writes which key": only `store/` reaches the key-value store; the
/// orchestrator asks it, never the storage (`LogStore::store()` is its only way there).
#[test]
fn the_orchestrator_never_reaches_the_storage_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut names = Vec::new();
    rust_files(&root, &root.join("run"), &mut names);
    assert!(!names.is_empty(), "run/ has files");
    let calls: Vec<&String> = names
        .iter()
        .filter(|file| {
            let text = std::fs::read_to_string(root.join(file)).expect("a readable source file");
            code_of(&text).contains(".store()")
        })
        .collect();
    assert!(calls.is_empty(), "run/ calls store(): {calls:?}");
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .expect("ARCHITECTURE.md");
    assert!(
        architecture.contains("`run/`\n  calls none") || architecture.contains("`run/` calls none")
    );
}

/// The code (comments left out) of every file under `src/core/<dir>`, by its path there.
fn code_under(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut names = Vec::new();
    rust_files(&root, &root.join(dir), &mut names);
    names
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(root.join(&file)).expect("a readable source file");
            (file, code_of(&text))
        })
        .collect()
}

/// One rung protocol (#64): every rung in a file of its own under 450 lines, all ending in the
/// one shared step (the only place the store lock is taken again), one constructor of the
/// result, and an archive's kind read in the archive's own file only.
#[test]
fn every_rung_ends_in_the_one_shared_step() {
    let run = code_under("run");
    for (file, code) in &run {
        let lines = code.lines().count();
        if file.starts_with("run/compactor/") {
            assert!(lines <= 450, "{file} has {lines} lines; at most 450");
        }
        let literal = code.lines().any(|line| {
            line.contains("CompactionResult {") && !line.contains("-> CompactionResult {")
        });
        assert!(
            !literal,
            "{file} builds a CompactionResult itself: use CompactionResult::new"
        );
    }
    let retakes: Vec<&String> = run
        .iter()
        .flat_map(|(file, code)| code.matches(".taken_again(").map(move |_| file))
        .collect();
    assert_eq!(
        retakes,
        ["run/compactor/ending.rs"],
        "the lock is taken again in one place"
    );
    for rung in [
        "clear.rs",
        "summarize.rs",
        "fallback.rs",
        "ending.rs",
        "ladder.rs",
    ] {
        assert!(
            run.iter()
                .any(|(file, _)| *file == format!("run/compactor/{rung}")),
            "run/compactor/{rung}"
        );
    }
    let kind_readers: Vec<String> = code_under("store")
        .into_iter()
        .filter(|(_, code)| {
            code.contains("placeholders.is_some()")
                || code.contains("placeholders {\n            Some")
        })
        .map(|(file, _)| file)
        .collect();
    assert!(
        kind_readers.is_empty() || kind_readers == ["store/archive_record.rs"],
        "{kind_readers:?}"
    );
}
