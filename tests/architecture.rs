//! The layering of docs/ARCHITECTURE.md, checked:
//! - the core (`cards`, `rules`, `seat`, `hand`, `classify`, `compare`, `moves`, `game`, `bot`,
//!   `shengji`, `hints`, `accessors`) uses no async, wire, script, store, logging or metrics crate,
//!   no module of the adapters (`service`, `variants`, `store`, `metrics`, `cli`, `config`) and no
//!   protobuf type;
//! - protobuf types (`pb::`) appear only in the service's wire, rpc and status modules (and the
//!   generated `pb` module);
//! - no two modules of `src/` import each other, a module counted with its submodules;
//! - the service's inner layers point one way (`rpc → access → games → session → core`,
//!   `rpc → wire → core`; `LAYER_RULES`), but for the commented breaks in `ALLOWED`.

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
    let code = code
        .replace("tonic_health::pb::", "")
        .replace("tonic_types::pb::", "");
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
    assert!(!names_pb("tonic_types::pb::FILE_DESCRIPTOR_SET"));
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

type Module = Vec<String>;

/// A file's text up to its inline test module (`#[cfg(test)]` then `mod name {`); a declared
/// one (`#[cfg(test)] mod tests;`) is a file of its own and does not end the text.
fn without_inline_tests(text: &str) -> &str {
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        let head = rest.lines().next().unwrap_or("");
        if (head.starts_with("mod ") || head.starts_with("pub mod ")) && head.contains('{') {
            return &text[..at];
        }
        from = at + 1;
    }
    text
}

/// Every library module of `src/` (not the binaries, not the tests) and the paths it refers to,
/// resolved.
fn module_references() -> Vec<(Module, Vec<Module>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
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
        let module = module_of(&rel);
        // A module's tests are not part of the layering (a test of `game::table` may use the
        // test helpers of `game::testing`, built on the table): a `tests.rs` is skipped, and a
        // file is read up to its inline `#[cfg(test)] mod … {` (which comes last, as clippy's
        // `items_after_test_module` wants).
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let refs = references(&module, is_mod, without_inline_tests(&text));
        out.push((module, refs));
    }
    out
}

/// The edges between modules: `a → b` where a file of module `a` refers into module `b` (the
/// longest prefix of the path that is a module), neither nested in the other (a parent
/// re-exports its children; the rule is about siblings and cousins).
fn module_edges(modules: &[(Module, Vec<Module>)]) -> std::collections::BTreeSet<(Module, Module)> {
    let known: std::collections::BTreeSet<&Module> = modules.iter().map(|(m, _)| m).collect();
    let target = |p: &[String]| -> Option<Module> {
        (1..=p.len())
            .rev()
            .map(|n| p[..n].to_vec())
            .find(|m| known.contains(m))
    };
    let mut edges = std::collections::BTreeSet::new();
    for (module, refs) in modules {
        for r in refs {
            if let Some(t) = target(r) {
                if !(t.starts_with(module) || module.starts_with(&t)) {
                    edges.insert((module.clone(), t));
                }
            }
        }
    }
    edges
}

/// The edges between every enclosing module: `a::b → c::d` is also `a → c`, `a::b → c` and
/// `a → c::d` (a module and its submodules count as one), except between a module and one
/// nested in it.
fn lifted(
    edges: &std::collections::BTreeSet<(Module, Module)>,
) -> std::collections::BTreeSet<(Module, Module)> {
    let mut out = std::collections::BTreeSet::new();
    for (a, b) in edges {
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let (pa, pb) = (&a[..i], &b[..j]);
                if !(pa.starts_with(pb) || pb.starts_with(pa)) {
                    out.insert((pa.to_vec(), pb.to_vec()));
                }
            }
        }
    }
    out
}

/// The pairs of modules that import each other, counting each module with its submodules.
fn circles(edges: &std::collections::BTreeSet<(Module, Module)>) -> Vec<String> {
    let all = lifted(edges);
    all.iter()
        .filter(|(a, b)| a < b && all.contains(&(b.clone(), a.clone())))
        .map(|(a, b)| format!("{} <-> {}", a.join("::"), b.join("::")))
        .collect()
}

fn path(s: &str) -> Module {
    s.split("::").map(str::to_string).collect()
}

#[test]
fn no_two_modules_of_src_import_each_other() {
    let modules = module_references();
    let edges = module_edges(&modules);
    let found = circles(&edges);
    assert!(
        found.is_empty(),
        "modules importing each other (a module with its submodules):\n{}",
        found.join("\n")
    );
    // The check sees what it must: a reference resolves, an edge is found, and a circle through
    // submodules (`a::b → c`, `c → a::d`) is a circle between `a` and `c`.
    let m = path("service::games");
    let r = references(
        &m,
        false,
        "use super::session::{Session, Prepared};\nuse crate::store::{self, Store};",
    );
    assert!(r.contains(&path("service::session")));
    assert!(r.contains(&path("store::Store")));
    assert!(edges.contains(&(m.clone(), path("service::session"))));
    let made: std::collections::BTreeSet<(Module, Module)> =
        [(path("a::b"), path("c")), (path("c"), path("a::d"))].into();
    assert_eq!(circles(&made), vec!["a <-> c".to_string()]);
    assert_eq!(
        without_inline_tests(
            "use a;\n#[cfg(test)]\nmod tests;\nuse b;\n#[cfg(test)]\nmod tests {\nuse c;\n}"
        ),
        "use a;\n#[cfg(test)]\nmod tests;\nuse b;\n"
    );
}

/// The service's inner layers (docs/ARCHITECTURE.md): `rpc → access → games → session → core`
/// and `rpc → wire → core`; nothing points back. Each rule: a module (with its submodules) must
/// not refer into another, and why.
const LAYER_RULES: [(&str, &str, &str); 16] = [
    (
        "service::session",
        "service::pb",
        "session never sees a protobuf type",
    ),
    (
        "service::session",
        "service::wire",
        "session never sees a protobuf type (nor the wire)",
    ),
    (
        "service::session",
        "service::rpc",
        "session is below the rpcs",
    ),
    (
        "service::session",
        "service::access",
        "session is below access",
    ),
    (
        "service::session",
        "service::games",
        "session is below the owner of live games",
    ),
    (
        "service::session",
        "service::live_games",
        "session is below the owner of live games",
    ),
    (
        "service::wire",
        "service::session",
        "wire never sees a session",
    ),
    (
        "service::wire",
        "service::shengji::table",
        "wire never sees a session (升級's table)",
    ),
    (
        "service::wire",
        "service::games",
        "wire never sees the cache",
    ),
    (
        "service::wire",
        "service::live_games",
        "wire never sees the cache",
    ),
    ("service::wire", "service::rpc", "wire is below the rpcs"),
    (
        "service::wire",
        "service::access",
        "wire is beside access, below the rpcs",
    ),
    (
        "service::games",
        "service::rpc",
        "games never sees the rpcs",
    ),
    (
        "service::games",
        "service::wire",
        "games never sees the wire",
    ),
    (
        "service::games",
        "service::session::snapshot",
        "the owner of live games is the same for every family; a family's snapshot format is its own",
    ),
    (
        "service::access",
        "service::rpc",
        "access is below the rpcs",
    ),
];

/// Known breaks of `LAYER_RULES` that only the game-family redesign (issue 43) can remove:
/// (module, the module it refers into, why it stays for now).
const ALLOWED: [(&str, &str, &str); 1] = [
    // 升級's wire mapping reads the live `Table` itself (its views and replay are built from it)
    // and the table's stored and command types (`Stored`, `Command`, `TableEvent`,
    // `ReplayAction`, `AutoReason`, `LeaveReason`) live in `service::shengji::table`. Moving them
    // below the wire means splitting 升級's table into its domain types and its live state, the
    // "one live table type" of issue 43's redesign.
    (
        "service::wire::shengji",
        "service::shengji::table",
        "issue 43: 升級's table types",
    ),
];

/// The layer rules broken by `modules`, but the allowed ones.
fn layer_breaks(modules: &[(Module, Vec<Module>)]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for (module, refs) in modules {
        for r in refs {
            for (from, to, why) in LAYER_RULES {
                let (from, to) = (path(from), path(to));
                if !(module.starts_with(&from) && r.starts_with(&to)) {
                    continue;
                }
                let allowed = ALLOWED
                    .iter()
                    .any(|(m, t, _)| module.starts_with(&path(m)) && r.starts_with(&path(t)));
                if !allowed {
                    out.insert(format!("{} → {}: {why}", module.join("::"), r.join("::")));
                }
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn the_service_layers_point_one_way() {
    let modules = module_references();
    let found = layer_breaks(&modules);
    assert!(
        found.is_empty(),
        "service modules referring upward (docs/ARCHITECTURE.md, Layers):\n{}",
        found.join("\n")
    );
    // Every allowed break is still a real one (remove the entry once it is fixed).
    for (m, t, _) in ALLOWED {
        assert!(
            modules
                .iter()
                .any(|(module, refs)| module.starts_with(&path(m))
                    && refs.iter().any(|r| r.starts_with(&path(t)))),
            "{m} → {t} is allowed but no longer happens: remove it from ALLOWED"
        );
    }
    // The check sees what it must: an upward reference is found.
    let session = path("service::session::entry");
    let refs = references(&session, false, "use crate::service::wire::Action;");
    assert_eq!(
        layer_breaks(&[(session, refs)]),
        vec!["service::session::entry → service::wire::Action: session never sees a protobuf type (nor the wire)".to_string()]
    );
}
