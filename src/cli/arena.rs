//! `shuangkou arena`: two bots play duplicate deals through a variant's real script.
//!
//! Each duplicate deal is played twice from the same seed (the same cards, seated the same way):
//! team A (policy `a`) plays seats 0 and 2 the first time and seats 1 and 3 the second (2 players:
//! seat 0, then seat 1), so the luck of the cards cancels out. Every decision is checked against the
//! engine's legal plays before it is applied (the arena is also the simulator that drives every
//! seat with bots); any illegal decision is counted and fails the run. Deals run in parallel on
//! scoped threads; the figures are aggregated in deal order, so they do not depend on the thread
//! count (only the latencies do).

use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::bot::{Bot, Decision, PlayerView};
use crate::game::hooks::{Outcome, VariantHooks};
use crate::game::{Entry, Event, Game, GameConfig, Phase};

/// Most duplicate deals one run may ask for.
pub const MAX_DEALS: u64 = 10_000_000;

/// Arguments of `shuangkou arena`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Variant id (an embedded script); required for Shuangkou.
    #[arg(long, default_value = "")]
    pub variant: String,
    /// The game: `shengji` plays whole 升級 matches between the policies `rule` and `random`.
    #[arg(long, value_enum, default_value_t = super::Game::Shuangkou)]
    pub game: super::Game,
    /// Duplicate deals (each is played twice).
    #[arg(long, default_value_t = 1000)]
    pub deals: u64,
    /// Seed of the run (every deal's seed derives from it).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Policy or style of team A (see `docs/BOTS.md`).
    #[arg(long)]
    pub a: String,
    /// Policy or style of team B.
    #[arg(long)]
    pub b: String,
    /// Deals per match (tilt after lost deals only shows in matches longer than one deal).
    #[arg(long, default_value_t = 1)]
    pub match_deals: u32,
    /// Worker threads (default: the machine's parallelism).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Use the built-in test double for the settlement instead of the script.
    #[arg(long)]
    pub plain_hooks: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// What one side (policy) did over the run.
#[derive(Clone)]
struct Side {
    latency: Histogram<u64>,
    decisions: u64,
    bombs: u64,
    passes: u64,
}

impl Side {
    fn new() -> Result<Side, String> {
        Ok(Side {
            latency: Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())?,
            decisions: 0,
            bombs: 0,
            passes: 0,
        })
    }
    fn merge(&mut self, o: &Side) {
        let _ = self.latency.add(&o.latency);
        self.decisions += o.decisions;
        self.bombs += o.bombs;
        self.passes += o.passes;
    }
}

/// One duplicate deal (two matches): team A's points and wins, in deals.
#[derive(Default, Clone, Copy)]
struct Pair {
    points: f64,
    wins: f64,
    deals: u64,
}

/// One match: team A at the seats of parity `a_parity` (seats, not players: the seating hook
/// may move players, and their hands, between seats before a deal starts).
fn play_match(
    hooks: &dyn VariantHooks,
    bots: [&Bot; 2],
    a_parity: u8,
    seed: [u8; 32],
    config: &GameConfig,
    sides: &mut [Side; 2],
    illegal: &mut Vec<String>,
) -> Result<Pair, String> {
    let (mut game, _) =
        Game::new(config.clone(), hooks, seed, None, 0).map_err(|e| e.to_string())?;
    let mut rng = ChaCha8Rng::from_seed(seed);
    let mut pair = Pair::default();
    let mut steps = 0u64;
    while game.phase() == Phase::Playing {
        let seat = game.turn().ok_or("no seat to act")?;
        let player = game.seating().player_at(seat).ok_or("bad seat")?;
        // Teams are seats (the seating hook may move players between seats).
        let side = usize::from(seat.team() != a_parity);
        let started = Instant::now();
        let view = PlayerView::new(&game, seat).ok_or("no view")?;
        let d = bots[side].decide(&view, hooks, &mut rng);
        let micros = started.elapsed().as_micros().max(1) as u64;
        let s = &mut sides[side];
        let _ = s.latency.record(micros.min(600_000_000));
        s.decisions += 1;
        match d {
            Decision::Pass => s.passes += 1,
            Decision::Play(p) if p.hand.is_bomb() => s.bombs += 1,
            _ => {}
        }
        let (plays, can_pass) = game.legal_plays(seat);
        let legal = match d {
            Decision::Pass => can_pass,
            Decision::Play(p) => plays.contains(&p),
        };
        if !legal {
            illegal.push(format!(
                "{}: {d:?} at seq {}",
                bots[side].spec().name,
                game.seq()
            ));
            return Err("illegal decision".into());
        }
        let action = d.action(game.hand(seat)).ok_or("cards not held")?;
        steps += 1;
        let events = game
            .apply(
                hooks,
                Entry {
                    player,
                    action,
                    at: steps,
                },
            )
            .map_err(|e| format!("{}: rejected {d:?}: {e}", bots[side].spec().name))?;
        for e in &events {
            if let Event::DealEnded(r) = e {
                pair.deals += 1;
                for (seat, score) in r.settlement.scores.iter().enumerate() {
                    if seat as u8 % 2 == a_parity {
                        pair.points += *score as f64 / 100.0;
                    }
                }
                let a_first = r.places.first().is_some_and(|s| s.team() == a_parity);
                pair.wins += match (r.outcome, a_first) {
                    (Some(Outcome::Draw), _) => 0.5,
                    (Some(_), true) => 1.0,
                    _ => 0.0,
                };
            }
        }
    }
    Ok(pair)
}

fn deal_seed(seed: u64, index: u64) -> [u8; 32] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut s = [0u8; 32];
    rng.fill(&mut s);
    s
}

fn quantiles(h: &Histogram<u64>) -> serde_json::Value {
    serde_json::json!({
        "p50": h.value_at_quantile(0.5),
        "p99": h.value_at_quantile(0.99),
        "max": h.max(),
    })
}

/// Runs the subcommand.
pub fn run(args: Args) -> ExitCode {
    if args.game == super::Game::Shengji {
        return super::shengji::arena(&super::shengji::ArenaArgs {
            a: &args.a,
            b: &args.b,
            deals: args.deals,
            seed: args.seed,
            json: args.json,
        });
    }
    if args.variant.is_empty() {
        eprintln!("arena: --variant is required");
        return ExitCode::from(2);
    }
    match run_inner(&args) {
        Ok(ok) => {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("arena: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: &Args) -> Result<bool, String> {
    if args.deals == 0 || args.deals > MAX_DEALS {
        return Err(format!("--deals must be 1..={MAX_DEALS}"));
    }
    if !(1..=32).contains(&args.match_deals) {
        return Err("--match-deals must be 1..=32".into());
    }
    let hooks = if args.plain_hooks {
        super::simulate::plain_hooks_for(&args.variant)?
    } else {
        super::simulate::hooks_for(&args.variant)?
    };
    let hooks = hooks.as_ref();
    let a = Bot::named(&args.a, hooks).map_err(|e| e.to_string())?;
    let b = Bot::named(&args.b, hooks).map_err(|e| e.to_string())?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    let config = GameConfig::new(args.variant.clone(), "arena", args.match_deals);
    let next = AtomicU64::new(0);
    let pairs: Mutex<Vec<(u64, Pair)>> = Mutex::new(Vec::new());
    let blank = Side::new()?;
    let totals = Mutex::new([blank.clone(), blank.clone()]);
    let illegal = Mutex::new(Vec::<String>::new());
    let errors = Mutex::new(Vec::<String>::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut sides = [blank.clone(), blank.clone()];
                let mut mine = Vec::new();
                let mut bad = Vec::new();
                let mut errs = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= args.deals {
                        break;
                    }
                    let seed = deal_seed(args.seed, i);
                    let mut sum = Pair::default();
                    for parity in [0u8, 1] {
                        match play_match(
                            hooks,
                            [&a, &b],
                            parity,
                            seed,
                            &config,
                            &mut sides,
                            &mut bad,
                        ) {
                            Ok(p) => {
                                sum.points += p.points;
                                sum.wins += p.wins;
                                sum.deals += p.deals;
                            }
                            Err(e) => errs.push(format!("deal {i} (seed {}): {e}", args.seed)),
                        }
                    }
                    mine.push((i, sum));
                }
                if let Ok(mut p) = pairs.lock() {
                    p.extend(mine);
                }
                if let Ok(mut t) = totals.lock() {
                    t[0].merge(&sides[0]);
                    t[1].merge(&sides[1]);
                }
                if let Ok(mut v) = illegal.lock() {
                    v.extend(bad);
                }
                if let Ok(mut v) = errors.lock() {
                    v.extend(errs);
                }
            });
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let mut pairs = pairs.into_inner().map_err(|e| e.to_string())?;
    pairs.sort_by_key(|(i, _)| *i);
    let totals = totals.into_inner().map_err(|e| e.to_string())?;
    let illegal = illegal.into_inner().map_err(|e| e.to_string())?;
    let errors = errors.into_inner().map_err(|e| e.to_string())?;
    let deals_played: u64 = pairs.iter().map(|(_, p)| p.deals).sum();
    let dp = deals_played.max(1) as f64;
    let win_rate = pairs.iter().map(|(_, p)| p.wins).sum::<f64>() / dp;
    let points = pairs.iter().map(|(_, p)| p.points).sum::<f64>() / dp;
    // The interval is over duplicate deals: each pair's points per deal is one sample.
    let samples: Vec<f64> = pairs
        .iter()
        .filter(|(_, p)| p.deals > 0)
        .map(|(_, p)| p.points / p.deals as f64)
        .collect();
    let n = samples.len().max(1) as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let half = 1.96 * (var / n).sqrt();
    let per_deal = |x: u64| (x as f64 / dp * 1000.0).round() / 1000.0;
    let round = |x: f64| (x * 10_000.0).round() / 10_000.0;
    let out = serde_json::json!({
        "variant": args.variant,
        "deals": args.deals,
        "deals_played": deals_played,
        "a": args.a,
        "b": args.b,
        "a_deal_win_rate": round(win_rate),
        "a_points_per_deal": round(points),
        "ci95": [round(mean - half), round(mean + half)],
        "latency_us": { "a": quantiles(&totals[0].latency), "b": quantiles(&totals[1].latency) },
        "decisions": { "a": totals[0].decisions, "b": totals[1].decisions },
        "bombs_per_deal": { "a": per_deal(totals[0].bombs), "b": per_deal(totals[1].bombs) },
        "passes_per_deal": { "a": per_deal(totals[0].passes), "b": per_deal(totals[1].passes) },
        "illegal_decisions": illegal.len(),
        "illegal_details": illegal.iter().take(10).collect::<Vec<_>>(),
        "errors": errors.len(),
        "error_details": errors.iter().take(10).collect::<Vec<_>>(),
        "match_deals": args.match_deals,
        "seed": args.seed,
        "threads": threads,
        "hooks": if args.plain_hooks { "plain" } else { "script" },
        "elapsed_s": (secs * 10.0).round() / 10.0,
    });
    if args.json {
        println!("{out}");
    } else {
        println!(
            "{} vs {} in {}: {} duplicate deals ({} deals) in {:.1}s: A wins {:.1}% of deals, \
             {:+.3} points per deal (95% CI {:+.3} .. {:+.3}); illegal decisions {}, errors {}",
            args.a,
            args.b,
            args.variant,
            args.deals,
            deals_played,
            secs,
            win_rate * 100.0,
            points,
            mean - half,
            mean + half,
            illegal.len(),
            errors.len()
        );
        for e in illegal.iter().chain(errors.iter()).take(10) {
            println!("  {e}");
        }
    }
    Ok(illegal.is_empty() && errors.is_empty())
}
