//! The layering of docs/ARCHITECTURE.md, checked:
//! - the core (`cards`, `rules`, `seat`, `hand`, `classify`, `compare`, `moves`, `game`, `bot`,
//!   `shengji`, `hints`, `accessors`) uses no async, wire, script, store, logging or metrics crate,
//!   no module of the adapters (`service`, `variants`, `store`, `metrics`, `cli`, `config`) and no
//!   protobuf type;
//! - protobuf types (`pb::`) appear only in the service's wire, rpc and status modules (and the
//!   generated `pb` module);
//! - no two modules of `src/` import each other.

use std::fs;
use std::path::Path;

const FORBIDDEN: [&str; 14] = [
    "tokio",
    "tonic",
    "prost",
    "rhai",
    "metrics",
    "redis",
    "redb",
    "tracing",
    "notify",
    "hyper",
    "crate::service",
    "crate::variants",
    "crate::store",
    "crate::cli",
];

fn check_file(path: &Path, offenders: &mut Vec<String>) {
    let text = fs::read_to_string(path).unwrap();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for word in FORBIDDEN {
            let hit = code.contains(&format!("{word}::"))
                || code.contains(&format!("use {word}"))
                || code.contains(&format!("{word}!"));
            if hit {
                offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
}

#[test]
fn the_core_depends_on_no_adapter_crate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    // Each core module, a file or a folder (read recursively: `game/table/` too).
    for name in [
        "cards",
        "rules",
        "hand",
        "classify",
        "compare",
        "moves",
        "hints",
        "determinism",
        "seat",
        "accessors",
        "game",
        "bot",
        "shengji",
    ] {
        let file = src.join(format!("{name}.rs"));
        let dir = src.join(name);
        assert!(
            file.is_file() || dir.is_dir(),
            "core module {name} not found"
        );
        let mut files = Vec::new();
        if file.is_file() {
            files.push(file);
        }
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        for path in files {
            check_file(&path, &mut offenders);
        }
    }
    assert!(
        offenders.is_empty(),
        "core modules use adapter crates:\n{}",
        offenders.join("\n")
    );
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments (line comments and doc comments) or string literals'
/// contents, line by line.
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let code = line.split("//").next().unwrap_or("");
            let mut out = String::new();
            let mut in_str = false;
            for c in code.chars() {
                if c == '"' {
                    in_str = !in_str;
                    out.push(c);
                } else if !in_str {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// True where a line names a protobuf type of this crate (`pb::…`, `use …pb`), not another
/// crate's (`tonic_health::pb::`).
fn names_pb(code: &str) -> bool {
    let code = code.replace("tonic_health::pb::", "");
    let bytes = code.as_bytes();
    code.match_indices("pb::").any(|(i, _)| {
        i == 0 || {
            let before = bytes[i - 1];
            !(before.is_ascii_alphanumeric() || before == b'_')
        }
    }) || code.contains("service::pb")
        || code.contains("super::pb")
}

#[test]
fn protobuf_types_stay_in_the_wire_rpc_and_status_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let allowed = |rel: &str| {
        rel.starts_with("service/wire/")
            || rel.starts_with("service/rpc/")
            || rel == "service/status.rs"
            || rel == "service/pb.rs"
            // Clients of the API (the load generator) are binaries, not library modules.
            || rel.starts_with("bin/")
    };
    let mut offenders = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed(&rel) {
            continue;
        }
        let text = fs::read_to_string(path).unwrap();
        for (i, code) in code_lines(&text).iter().enumerate() {
            if names_pb(code) {
                offenders.push(format!("src/{rel}:{}: {}", i + 1, code.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "protobuf types outside wire/, rpc/ and status.rs:\n{}",
        offenders.join("\n")
    );
    // The check sees what it must: the wire module does name them.
    assert!(names_pb("use crate::service::pb;") && names_pb("fn f(r: &pb::Play) {}"));
    assert!(!names_pb("tonic_health::pb::FILE_DESCRIPTOR_SET") && !names_pb("let rpb::x = 1;"));
}

/// The module of a file: `src/service/rpc/game.rs` is `service::rpc::game`, a `mod.rs` (or
/// `lib.rs`) is its directory's module.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The module paths a file refers to (`crate::a::b`, `super::a`, `use a::{b, c}` inside the
/// crate), resolved to absolute paths (segments after `crate`).
fn references(module: &[String], is_mod_file: bool, text: &str) -> Vec<Vec<String>> {
    // Statements joined so that a `use` over several lines reads as one.
    let code = code_lines(text).join(" ");
    let mut out = Vec::new();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 7)].iter().collect();
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !ident(chars[i - 1]) && chars[i - 1] != ':');
        if !starts {
            i += 1;
            continue;
        }
        // Read the path: segments separated by `::`, possibly ending in a `{…}` group.
        let mut segs: Vec<String> = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < chars.len() && ident(chars[j]) {
                j += 1;
            }
            segs.push(chars[s..j].iter().collect());
            if j + 1 < chars.len() && chars[j] == ':' && chars[j + 1] == ':' {
                j += 2;
                if j < chars.len() && chars[j] == '{' {
                    // A group: each item's first segment.
                    let close = (j..chars.len())
                        .find(|&k| chars[k] == '}')
                        .unwrap_or(chars.len());
                    let inner: String = chars[j + 1..close].iter().collect();
                    for item in inner.split(',') {
                        let first = item.trim().split("::").next().unwrap_or("").trim();
                        let first = first.split_whitespace().next().unwrap_or("");
                        if !first.is_empty() && first != "self" {
                            let mut p = segs.clone();
                            p.push(first.to_string());
                            out.push(p);
                        }
                    }
                    out.push(segs.clone());
                    j = close;
                    break;
                }
                continue;
            }
            out.push(segs.clone());
            break;
        }
        i = j.max(i + 1);
    }
    // Resolve `crate` and `super` against this module.
    out.into_iter()
        .filter_map(|p| {
            // In `a/mod.rs` (module `a`) and in `a/b.rs` (module `a::b`) alike, `super` is the
            // module's parent.
            let _ = is_mod_file;
            let mut base: Vec<String> = module.to_vec();
            let mut segs = p.into_iter().peekable();
            match segs.peek().map(String::as_str) {
                Some("crate") => {
                    segs.next();
                    base.clear();
                }
                Some("super") => {
                    // A file's own module is its parent's child: `super` is the parent.
                    while segs.peek().map(String::as_str) == Some("super") {
                        segs.next();
                        base.pop()?;
                    }
                }
                _ => return None,
            }
            base.extend(segs);
            Some(base)
        })
        .collect()
}

#[test]
fn no_two_modules_of_src_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules: Vec<(Vec<String>, std::path::PathBuf, bool)> = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("bin/") || rel == "main.rs" {
            continue;
        }
        let is_mod = rel.ends_with("mod.rs") || rel == "lib.rs";
        modules.push((module_of(&rel), path, is_mod));
    }
    let known: std::collections::BTreeSet<Vec<String>> =
        modules.iter().map(|(m, _, _)| m.clone()).collect();
    // The module a path lands in: its longest prefix that is a module.
    let target = |p: &[String]| -> Option<Vec<String>> {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|m| known.contains(m))
    };
    let mut edges: std::collections::BTreeSet<(Vec<String>, Vec<String>)> = Default::default();
    for (module, path, is_mod) in &modules {
        let text = fs::read_to_string(path).unwrap();
        for r in references(module, *is_mod, &text) {
            if let Some(t) = target(&r) {
                // A module and its own submodules are one unit (a parent re-exports its
                // children); the rule is about siblings and cousins.
                let nested = t.starts_with(module) || module.starts_with(&t);
                if !nested {
                    edges.insert((module.clone(), t));
                }
            }
        }
    }
    let mut circles = Vec::new();
    for (a, b) in &edges {
        if a < b && edges.contains(&(b.clone(), a.clone())) {
            circles.push(format!("{} <-> {}", a.join("::"), b.join("::")));
        }
    }
    // The same between the top-level modules (`game::flow` → `bot` and `bot::view` → `game` is
    // `game` ↔ `bot`).
    let top: std::collections::BTreeSet<(String, String)> = edges
        .iter()
        .filter_map(|(a, b)| Some((a.first()?.clone(), b.first()?.clone())))
        .filter(|(a, b)| a != b)
        .collect();
    for (a, b) in &top {
        if a < b && top.contains(&(b.clone(), a.clone())) {
            circles.push(format!("{a} <-> {b} (top-level modules)"));
        }
    }
    assert!(
        circles.is_empty(),
        "modules importing each other:\n{}",
        circles.join("\n")
    );
    // The check sees what it must: a reference resolves, and a circle would be found.
    let m = vec!["service".to_string(), "games".to_string()];
    let r = references(
        &m,
        false,
        "use super::session::{Session, Prepared};\nuse crate::store::{self, Store};",
    );
    assert!(r.contains(&vec!["service".to_string(), "session".to_string()]));
    assert!(r.contains(&vec!["store".to_string(), "Store".to_string()]));
    assert!(edges.contains(&(
        m.clone(),
        vec!["service".to_string(), "session".to_string()]
    )));
}
