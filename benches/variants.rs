//! Cost of one call into a variant script: a settlement (`settle`, a deal with three bombs
//! played and one still in hand), an escape settlement and a seating call, per variant.
//!
//! `cargo bench --bench variants`; results in BENCHMARKS.md ("Variant scripts").
//!
//! Counting mode, for a figure that does not depend on the machine's load: with
//! `VARIANTS_BENCH_COUNT=<id>/<hook>:<n>` (hook `settle`, `settle_escape` or `seating`) the binary
//! only makes `n` calls and exits, so that `valgrind --tool=callgrind` can count the instructions
//! of one call (run it with n = 0 and n = 1000 and divide the difference by 1000).

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use shuangkou::game::hooks::{DealFacts, EscapeFacts, SeatingFacts, VariantHooks};
use shuangkou::variants::{self, ScriptVariant, facts};
use std::sync::Arc;

fn deal(id: &str) -> DealFacts {
    let rules = variants::builtin_rules(id).unwrap();
    let json = if rules.players == 2 {
        serde_json::json!({
            "places": [0, 1], "cards_left": [0, 12],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"},
                             {"seat": 0, "cards": "K K K K K"}],
            "bombs_in_hand": [[], ["7 7 7 7 7 7"]]
        })
    } else {
        serde_json::json!({
            "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"},
                             {"seat": 2, "cards": "K K K K K"}],
            "bombs_in_hand": [[], [], ["7 7 7 7"], []]
        })
    };
    facts::parse_deal(&json, &rules).unwrap()
}

fn escape(id: &str) -> EscapeFacts {
    let rules = variants::builtin_rules(id).unwrap();
    let json = if rules.players == 2 {
        serde_json::json!({"escaper": 1, "cards_left": [10, 12],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}],
            "bombs_in_hand": [["7 7 7 7 7 7"], []]})
    } else {
        serde_json::json!({"escaper": 1, "cards_left": [10, 12, 9, 14],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}]})
    };
    facts::parse_escape(&json, &rules).unwrap()
}

fn seating(id: &str) -> SeatingFacts {
    let rules = variants::builtin_rules(id).unwrap();
    let json = serde_json::json!({
        "deal_number": 2, "shown_card": 29, "shown_holders": [0, 1], "random": 12345,
        "previous": {"outcome": "single", "places": if rules.players == 2 { vec![1, 0] } else { vec![1, 0, 3, 2] }, "escaped": null}
    });
    facts::parse_seating(&json, &rules).unwrap()
}

/// The variant `id`: the embedded script, or `$VARIANTS_BENCH_DIR/<id>.rhai` when that is set
/// (to measure a changed script without rebuilding).
fn variant(id: &str) -> ScriptVariant {
    let compiled = match std::env::var_os("VARIANTS_BENCH_DIR") {
        Some(dir) => {
            let path = std::path::Path::new(&dir).join(format!("{id}.rhai"));
            let src = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Arc::new(
                variants::CompiledVariant::compile(&path.display().to_string(), &src, Some(id))
                    .unwrap_or_else(|e| panic!("{e}")),
            )
        }
        None => variants::builtin(id).unwrap(),
    };
    compiled.with_defaults().unwrap()
}

fn bench(c: &mut Criterion) {
    for (id, _) in variants::EMBEDDED {
        let v = variant(id);
        let d = deal(id);
        let e = escape(id);
        let s = seating(id);
        c.bench_function(&format!("{id}/settle"), |b| {
            b.iter(|| v.settle(black_box(&d)).unwrap())
        });
        c.bench_function(&format!("{id}/settle_escape"), |b| {
            b.iter(|| v.settle_escape(black_box(&e)).unwrap())
        });
        c.bench_function(&format!("{id}/seating"), |b| {
            b.iter(|| v.seating(black_box(&s)).unwrap())
        });
    }
    // Compiling and contract-checking one script (what a reload pays before its checks).
    let (_, src) = variants::EMBEDDED[2];
    c.bench_function("baibian/compile", |b| {
        b.iter(|| variants::CompiledVariant::compile("bench", black_box(src), None).unwrap())
    });
}

/// Counting mode: `n` calls of one hook, nothing else.
fn count(spec: &str) {
    let (what, n) = spec.split_once(':').expect("<id>/<hook>:<n>");
    let (id, hook) = what.split_once('/').expect("<id>/<hook>");
    let n: usize = n.parse().expect("a number of calls");
    let v = variant(id);
    let (d, e, s) = (deal(id), escape(id), seating(id));
    for _ in 0..n {
        match hook {
            "settle" => drop(black_box(v.settle(&d).unwrap())),
            "settle_escape" => drop(black_box(v.settle_escape(&e).unwrap())),
            "seating" => drop(black_box(v.seating(&s).unwrap())),
            other => panic!("unknown hook {other}"),
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(spec) = std::env::var("VARIANTS_BENCH_COUNT") {
        count(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
