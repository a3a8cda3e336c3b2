//! Bot decision latency: `heuristic` and `search` (default budget, and the 托管 budget
//! `search:40`) deciding on mid-deal views of `baibian` and `classic`, settled through the
//! variant's real script.
//!
//! `cargo bench --bench bots`; figures and targets are in `BENCHMARKS.md` (## Bots), next to the
//! arena's per-decision latencies (`shuangkou arena --json`, `latency_us`). The views are those
//! a heuristic table reaches: 40 seeded deals, each played by four heuristic bots, every 7th
//! decision point kept. One iteration decides on one view (cycling through them).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::bot::{Bot, PlayerView};
use shuangkou::game::hooks::VariantHooks;
use shuangkou::game::{Entry, Game, GameConfig, Phase};

fn views(hooks: &dyn VariantHooks) -> Vec<PlayerView> {
    let bot = Bot::named("heuristic", hooks).expect("heuristic bot");
    let config = GameConfig::new("bench", "bench", 1);
    let mut out = Vec::new();
    for deal in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(deal);
        let mut seed = [0u8; 32];
        rng.fill(&mut seed);
        let (mut game, _) = Game::new(config.clone(), hooks, seed, None, 0).expect("game");
        let mut step = 0u64;
        while game.phase() == Phase::Playing {
            let Some(seat) = game.turn() else { break };
            let Some(view) = PlayerView::new(&game, seat) else {
                break;
            };
            if step % 7 == 0 {
                out.push(view.clone());
            }
            let d = bot.decide(&view, hooks, &mut rng);
            let Some(action) = d.action(game.hand(seat)) else {
                break;
            };
            let player = game.seating()[seat];
            step += 1;
            if game
                .apply(
                    hooks,
                    Entry {
                        player,
                        action,
                        at: step,
                    },
                )
                .is_err()
            {
                break;
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    for variant in ["baibian", "classic"] {
        let hooks = shuangkou::cli::simulate::hooks_for(variant).expect("variant");
        let hooks = hooks.as_ref();
        let views = views(hooks);
        for name in ["heuristic", "search:40", "search"] {
            let bot = Bot::named(name, hooks).expect("bot");
            let mut group = c.benchmark_group(format!("decide/{variant}"));
            if name.starts_with("search") {
                group.sample_size(20);
            }
            let mut i = 0usize;
            group.bench_function(name, |b| {
                b.iter(|| {
                    i = (i + 1) % views.len();
                    let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
                    black_box(bot.decide(&views[i], hooks, &mut rng))
                })
            });
            group.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
