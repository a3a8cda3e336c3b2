//! The engine's cost per action over a long match (BENCHMARKS.md, "Long matches"): plays one
//! match of many deals in process, doing for every action what the service does when it
//! prepares one (`Session::prepare_entry`: copy the state, apply the action, compute the state
//! hash), and prints the median and p90 of that work by deal number, side by side, plus the
//! ratio of the last deals to the first.
//!
//! `cargo run --release --example long_match [variant] [deals] [seed]` (defaults: baibian, 1000, 21)

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::testing::random_turn;
use shuangkou::game::{Entry, Game, GameConfig, HashScheme, Phase};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "baibian".into());
    let deals: u32 = args.next().and_then(|d| d.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(21);
    println!("variant {variant}, {deals} deals, seed {seed}");
    let hooks = shuangkou::variants::builtin(&variant)
        .expect("a built-in variant")
        .with_defaults()
        .expect("its defaults");
    let config = GameConfig {
        variant: variant.clone(),
        version: "bench".into(),
        deals,
        turn_ms: Some(30_000),
        max_consecutive_timeouts: 3,
        reconnect_ms: 90_000,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game_seed = [0u8; 32];
    rng.fill(&mut game_seed);
    let (mut game, _) = Game::new(config, &hooks, game_seed, None, 0).expect("a new game");
    // Microseconds per action, by deal number.
    let mut by_deal: Vec<Vec<f64>> = vec![Vec::new(); deals as usize + 1];
    let mut at = 0u64;
    while game.phase() == Phase::Playing {
        at += 1;
        let seat = game.turn().expect("a seat to act");
        let player = game.seating()[seat];
        let action = random_turn(&game, seat, &mut rng).expect("a legal play");
        let deal = game.deal_number() as usize;
        let start = Instant::now();
        let mut next = game.clone();
        next.apply(&hooks, Entry { player, action, at })
            .expect("a legal action");
        let hash = next.state_hash_with(HashScheme::Chained);
        let micros = start.elapsed().as_secs_f64() * 1e6;
        std::hint::black_box(hash);
        by_deal[deal].push(micros);
        game = next;
    }
    let step = (deals / 10).max(1) as usize;
    let mut rows: Vec<usize> = (1..=deals as usize).step_by(step).collect();
    if rows.last() != Some(&(deals as usize)) {
        rows.push(deals as usize);
    }
    println!("deal | actions | p50 µs | p90 µs");
    let mut medians = Vec::new();
    for d in rows {
        let mut v = by_deal[d].clone();
        v.sort_by(f64::total_cmp);
        let p50 = percentile(&v, 0.5);
        medians.push(p50);
        println!(
            "{d:>4} | {:>7} | {p50:>6.1} | {:>6.1}",
            v.len(),
            percentile(&v, 0.9)
        );
    }
    if let (Some(first), Some(last)) = (medians.first(), medians.last()) {
        println!("p50 last / first deal: {:.2}×", last / first);
    }
}
