//! The layering of ARCHITECTURE.md, checked: the core (`cards`, `rules`, `hand`, `compare`,
//! `moves`, `game`) uses no async, wire, script, store, logging or metrics crate, and no module
//! of the adapters (`service`, `variants`, `store`, `metrics`, `cli`, `config`).

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
    for f in [
        "cards.rs",
        "rules.rs",
        "hand.rs",
        "compare.rs",
        "moves.rs",
        "determinism.rs",
    ] {
        check_file(&src.join(f), &mut offenders);
    }
    for entry in ["game", "shengji"]
        .iter()
        .flat_map(|d| fs::read_dir(src.join(d)).unwrap())
    {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            check_file(&path, &mut offenders);
        }
    }
    assert!(
        offenders.is_empty(),
        "core modules use adapter crates:\n{}",
        offenders.join("\n")
    );
}
