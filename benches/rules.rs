//! Rules-core benchmarks: classification per archetype, and legal plays of dealt hands.
//!
//! `cargo bench --bench rules` runs them all; figures and targets are in `BENCHMARKS.md`.
//!
//! - `classify/*`: `classify::classify` of one play per archetype (牌型), with and without wild
//!   jokers (targets: ≤ 100 ns without wilds, ≤ 500 ns with).
//! - `leads/{baibian,qianbian}`: `moves::legal_plays` leading, over 200 uniformly dealt 27-card
//!   hands (seeded ChaCha8 shuffles of the 108 cards); one iteration is all 200 hands, so the
//!   per-hand mean is the time / 200 (criterion's throughput line shows hands per second).
//!   Targets: ≤ 30 µs per hand (百變) and ≤ 80 µs (千變), as the median over the 200 hands.
//! - `follow_pair/*`, `follow_bomb/*`: the same hands following a pair of 8s and a 5-card bomb
//!   of 9s.
//!
//! Before the criterion groups run, the per-hand median is measured separately (each hand timed
//! alone, median of 31 runs per hand) and printed to stderr with the 90th percentile and the
//! slowest hand, because a mean over 200 hands hides the shape of the distribution.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet, RankCounts};
use shuangkou::classify;
use shuangkou::hand::Hand;
use shuangkou::moves;
use shuangkou::rules::Rules;

/// Number of seeded hands.
const HANDS: u64 = 200;
/// Runs per hand for the per-hand medians.
const RUNS_PER_HAND: usize = 31;

fn cards(text: &str) -> RankCounts {
    text.parse().expect("bench cards are valid notation")
}

/// Hand `seed`: the first 27 cards of a ChaCha8 shuffle of the two decks.
fn dealt_hand(seed: u64) -> RankCounts {
    let mut deck: Vec<Card> = Card::all().collect();
    deck.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    deck.into_iter().take(27).collect::<CardSet>().rank_counts()
}

fn previous(text: &str, rules: &Rules) -> Hand {
    classify::resolve(cards(text), None, None, rules).expect("bench previous play is valid")
}

fn classify(c: &mut Criterion) {
    let cases: [(&str, Rules, &str); 12] = [
        ("single", Rules::BAIBIAN, "7"),
        ("pair", Rules::BAIBIAN, "9 9"),
        ("triple", Rules::BAIBIAN, "Q Q Q"),
        ("straight", Rules::BAIBIAN, "3 4 5 6 7 8 9"),
        ("pair_chain", Rules::BAIBIAN, "5 5 6 6 7 7 8 8"),
        ("bomb", Rules::BAIBIAN, "Q Q Q Q Q Q"),
        ("chain_bomb", Rules::BAIBIAN, "3 3 3 3 4 4 4 4 5 5 5 5"),
        ("not_a_combination", Rules::BAIBIAN, "3 3 4 5 5"),
        ("wild_straight", Rules::BAIBIAN, "4 5 6 8 BJ"),
        ("wild_bomb", Rules::BAIBIAN, "7 7 7 7 BJ BJ"),
        (
            "wild_chain_bomb_qianbian",
            Rules::QIANBIAN,
            "3 3 3 4 4 4 4 5 5 5 SJ BJ",
        ),
        ("qianbian_ambiguous", Rules::QIANBIAN, "3 4 5 SJ BJ BJ"),
    ];
    let mut group = c.benchmark_group("classify");
    for (name, rules, text) in cases {
        let play = cards(text);
        group.bench_function(name, |b| {
            b.iter(|| classify::classify(black_box(play), black_box(&rules)))
        });
    }
    group.finish();
}

/// The legal-play scenarios: (group, variant, rules, previous play).
fn scenarios() -> Vec<(&'static str, &'static str, Rules, Option<Hand>)> {
    let mut v = Vec::new();
    for (id, rules) in [("baibian", Rules::BAIBIAN), ("qianbian", Rules::QIANBIAN)] {
        v.push(("leads", id, rules, None));
        v.push(("follow_pair", id, rules, Some(previous("8 8", &rules))));
        v.push((
            "follow_bomb",
            id,
            rules,
            Some(previous("9 9 9 9 9", &rules)),
        ));
    }
    v
}

/// Times each hand alone and prints the median, 90th percentile and slowest of the per-hand
/// medians.
fn per_hand_medians(hands: &[RankCounts]) {
    eprintln!(
        "\nper-hand medians over {} hands ({RUNS_PER_HAND} runs each):",
        hands.len()
    );
    eprintln!(
        "  {:<24} {:>10} {:>10} {:>10} {:>12}",
        "scenario", "median", "p90", "max", "plays (med)"
    );
    for (group, id, rules, prev) in scenarios() {
        let mut medians = Vec::with_capacity(hands.len());
        let mut counts = Vec::with_capacity(hands.len());
        let mut runs = [0f64; RUNS_PER_HAND];
        for &h in hands {
            for r in runs.iter_mut() {
                let t = Instant::now();
                let plays = moves::legal_plays(black_box(h), prev.as_ref(), &rules);
                *r = t.elapsed().as_secs_f64();
                black_box(&plays);
            }
            runs.sort_by(f64::total_cmp);
            medians.push(runs[RUNS_PER_HAND / 2]);
            counts.push(moves::legal_plays(h, prev.as_ref(), &rules).len());
        }
        medians.sort_by(f64::total_cmp);
        counts.sort_unstable();
        let at = |q: f64| medians[((medians.len() - 1) as f64 * q).round() as usize] * 1e6;
        eprintln!(
            "  {:<24} {:>8.2}µs {:>8.2}µs {:>8.2}µs {:>12}",
            format!("{group}/{id}"),
            at(0.5),
            at(0.9),
            at(1.0),
            counts[counts.len() / 2]
        );
    }
    eprintln!();
}

fn legal_plays(c: &mut Criterion) {
    let hands: Vec<RankCounts> = (0..HANDS).map(dealt_hand).collect();
    per_hand_medians(&hands);
    for (group_name, id, rules, prev) in scenarios() {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(HANDS));
        group.bench_function(id, |b| {
            b.iter(|| {
                let mut n = 0;
                for &h in &hands {
                    n += moves::legal_plays(black_box(h), prev.as_ref(), &rules).len();
                }
                n
            })
        });
        group.finish();
    }
}

criterion_group!(benches, classify, legal_plays);
criterion_main!(benches);
