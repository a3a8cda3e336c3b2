//! 升級 core benchmarks: random full deals per second on one thread, and the legal cards of one
//! decision.
//!
//! `cargo bench --bench shengji` runs them; figures and targets are in `BENCHMARKS.md` (## 升級).
//!
//! - `shengji/random_deal`: one deal of a new match from a fresh seed, played to its end by the
//!   random driver of `shengji::sim` (49 deal steps, random declarations, a random bury, 48 random
//!   legal plays), without invariant checks; one iteration is one deal (throughput: deals/s).
//! - `shengji/random_deal_hashed`: the same with the state hash after every action, as the
//!   service records it.
//! - `shengji/legal_cards`: `Game::legal_cards` of the seat to act, over 1,000 decision points
//!   taken from seeded random deals; one iteration is all 1,000 (the per-decision time is the time
//!   / 1,000). The mean number of legal cards per decision is printed to stderr.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shuangkou::shengji::sim::{match_seed, random_action};
use shuangkou::shengji::{Game, Phase, Setup, StandardHooks};

const DECISIONS: usize = 1_000;

/// Plays deal 1 of the match seeded by `index` to its end; returns the actions applied.
fn one_deal(index: u64, hash: bool) -> usize {
    let hooks = StandardHooks::default();
    let mut rng = ChaCha8Rng::seed_from_u64(index);
    let Ok((mut g, _)) = Game::new(Setup::seeded(match_seed(1, index))) else {
        return 0;
    };
    let mut n = 0;
    while g.deal_number() == 1 {
        let Some(a) = random_action(&g, &hooks, &mut rng, 0.05) else {
            break;
        };
        if g.apply(&hooks, a).is_err() {
            break;
        }
        if hash {
            black_box(g.state_hash());
        }
        n += 1;
    }
    n
}

/// Decision points: games with a seat to play, from seeded deals.
fn decisions() -> Vec<Game> {
    let hooks = StandardHooks::default();
    let mut out = Vec::with_capacity(DECISIONS);
    let mut index = 0;
    while out.len() < DECISIONS {
        index += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(index);
        let Ok((mut g, _)) = Game::new(Setup::seeded(match_seed(2, index))) else {
            continue;
        };
        while g.deal_number() == 1 && out.len() < DECISIONS {
            if g.phase() == Phase::Playing {
                out.push(g.clone());
            }
            let Some(a) = random_action(&g, &hooks, &mut rng, 0.05) else {
                break;
            };
            if g.apply(&hooks, a).is_err() {
                break;
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("shengji");
    group.throughput(Throughput::Elements(1));
    let mut index = 0u64;
    group.bench_function("random_deal", |b| {
        b.iter(|| {
            index += 1;
            one_deal(black_box(index), false)
        })
    });
    group.bench_function("random_deal_hashed", |b| {
        b.iter(|| {
            index += 1;
            one_deal(black_box(index), true)
        })
    });
    let points = decisions();
    let total: usize = points
        .iter()
        .filter_map(|g| g.turn().map(|s| g.legal_cards(s).len()))
        .sum();
    eprintln!(
        "shengji/legal_cards: {:.2} legal cards per decision over {} decisions",
        total as f64 / points.len() as f64,
        points.len()
    );
    group.throughput(Throughput::Elements(DECISIONS as u64));
    group.bench_function("legal_cards", |b| {
        b.iter(|| {
            let mut n = 0;
            for g in &points {
                if let Some(s) = g.turn() {
                    n += black_box(g.legal_cards(s)).len();
                }
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
