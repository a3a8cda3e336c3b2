//! The 升級 side of the command-line tools (`--game shengji`): `simulate` (random matches with
//! every invariant checked, through the variant script), `arena` (the rule bot against the random
//! policy, whole matches, sides swapped on every seed) and `rules follow` (the cards a hand may
//! play to a trick, and the trick's winner).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cards::{Card, CardSet, Rank, Suit};
use crate::game::Viewer;
use crate::seat::{Player, Seat};
use crate::shengji::bot::RuleBot;
use crate::shengji::sim::{SimOptions, match_seed, random_action, simulate as sim};
use crate::shengji::{Action, Game, Level, Order, Phase, Setup, ShengjiHooks};
use crate::variants::{Registry, RegistryConfig, ShengjiScript, ShengjiVariant};

/// The 升級 script (embedded, or the `shengji.rhai` of `dir`, checked as the server loads it)
/// with `key=value` option overrides.
pub fn hooks(dir: Option<&Path>, options: &[String]) -> Result<ShengjiScript, String> {
    let registry = match dir {
        None => Registry::<ShengjiVariant>::embedded_family(),
        Some(d) => Registry::<ShengjiVariant>::open_family(RegistryConfig {
            dir: Some(d.to_path_buf()),
            ..RegistryConfig::default()
        })
        .map(|(r, _)| r),
    }
    .map_err(|e| e.to_string())?;
    let compiled: Arc<ShengjiVariant> = registry
        .active("shengji")
        .ok_or("no shengji.rhai among the scripts")?;
    let mut map = BTreeMap::new();
    for pair in options {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("option {pair:?} is not key=value"))?;
        map.insert(k.trim().to_string(), v.trim().to_string());
    }
    compiled.configure(&map).map_err(|e| e.to_string())
}

/// What `simulate --game shengji` is asked (from `simulate`'s arguments).
pub struct SimulateArgs<'a> {
    pub variants_dir: Option<&'a Path>,
    pub options: &'a [String],
    pub seed: u64,
    /// Matches.
    pub deals: u64,
    pub no_check: bool,
    pub json: bool,
}

/// What `arena --game shengji` is asked (from `arena`'s arguments).
pub struct ArenaArgs<'a> {
    pub a: &'a str,
    pub b: &'a str,
    /// Seeds (each a match played twice).
    pub deals: u64,
    pub seed: u64,
    pub json: bool,
}

/// `shuangkou simulate --game shengji`: `--deals` random matches.
pub fn simulate(args: &SimulateArgs<'_>) -> ExitCode {
    let hooks = match hooks(args.variants_dir, args.options) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let options = SimOptions {
        check: !args.no_check,
        ..SimOptions::default()
    };
    let start = Instant::now();
    let report = sim(&hooks, args.seed, args.deals, options);
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let per_second = report.deals as f64 / secs;
    if args.json {
        let mut out = serde_json::to_value(&report).unwrap_or_default();
        if let Some(o) = out.as_object_mut() {
            o.insert("game".into(), "shengji".into());
            o.insert("seed".into(), args.seed.into());
            o.insert("checked".into(), options.check.into());
            o.insert(
                "deals_per_second".into(),
                ((per_second * 10.0).round() / 10.0).into(),
            );
        }
        println!("{out}");
    } else {
        println!(
            "shengji: {} matches ({} finished), {} deals, {} actions in {:.2}s = {:.0} deals/s, checks {}",
            report.matches,
            report.finished_matches,
            report.deals,
            report.actions,
            secs,
            per_second,
            if options.check { "on" } else { "off" }
        );
        println!(
            "  dealer kept: {}  摳底: {}  declared: {}",
            report.dealer_kept, report.kou_di, report.declared
        );
        for v in &report.violations {
            println!("VIOLATION {v}");
        }
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// An arena policy of 升級.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    /// `shengji::bot::RuleBot`, deciding from its seat's view only.
    Rule,
    /// A random legal action.
    Random,
}

fn policy(name: &str) -> Result<Policy, String> {
    match name {
        "rule" => Ok(Policy::Rule),
        "random" => Ok(Policy::Random),
        other => Err(format!("no 升級 policy {other:?} (rule, random)")),
    }
}

/// What one match of the arena produced.
struct Played {
    winner: Option<u8>,
    deals: u32,
    decisions: u64,
}

/// The action of `seat` under `policy`, if it has one now.
fn decide(
    policy: Policy,
    game: &Game,
    seat: Seat,
    hooks: &dyn ShengjiHooks,
    rng: &mut ChaCha8Rng,
    seed: u64,
) -> Option<Action> {
    match policy {
        Policy::Rule => RuleBot {
            seed,
            bury_points: hooks.bury_points_allowed(),
        }
        .decide(&game.view(Viewer::Player(Player::new(seat.number())))),
        Policy::Random if game.phase() == Phase::Dealing => {
            let level = game.level().rank();
            let card = game.hand(seat).of_rank(level).iter().next()?;
            (game.declaration().is_none() && rng.random_bool(0.05))
                .then_some(Action::Declare { seat, card })
        }
        Policy::Random => random_action(game, hooks, rng, 0.0),
    }
}

/// One whole match: team 0 plays `policies[0]`, team 1 `policies[1]`. Every decision is applied
/// by the engine; a refused one is an error.
fn play(
    hooks: &dyn ShengjiHooks,
    seed: u64,
    index: u64,
    policies: [Policy; 2],
) -> Result<Played, String> {
    let (mut game, _) =
        Game::new(Setup::seeded(match_seed(seed, index))).map_err(|e| e.to_string())?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.rotate_left(17));
    let mut decisions = 0u64;
    let bot_seed = seed.wrapping_add(index);
    while game.phase() != Phase::Finished && game.deal_number() <= 200 {
        let action = if game.phase() == Phase::Dealing {
            Seat::all(4)
                .find_map(|s| {
                    decide(
                        policies[usize::from(s.team())],
                        &game,
                        s,
                        hooks,
                        &mut rng,
                        bot_seed,
                    )
                    .filter(|a| matches!(a, Action::Declare { .. }))
                })
                .unwrap_or(Action::Deal)
        } else {
            let seat = game.turn().ok_or("no seat to act")?;
            decisions += 1;
            decide(
                policies[usize::from(seat.team())],
                &game,
                seat,
                hooks,
                &mut rng,
                bot_seed,
            )
            .ok_or_else(|| format!("seat {seat} had no decision"))?
        };
        game.apply(hooks, action)
            .map_err(|e| format!("seed {seed} match {index}: {action:?} refused: {e}"))?;
    }
    Ok(Played {
        winner: game.winner(),
        deals: game.results().len() as u32,
        decisions,
    })
}

/// `shuangkou arena --game shengji --a rule --b random`: `--deals` seeds, each a whole match
/// played twice with the teams swapped.
pub fn arena(args: &ArenaArgs<'_>) -> ExitCode {
    let run = || -> Result<serde_json::Value, String> {
        let (a, b) = (policy(args.a)?, policy(args.b)?);
        let hooks = hooks(None, &[])?;
        let (mut a_wins, mut unfinished, mut deals, mut decisions) = (0u64, 0u64, 0u64, 0u64);
        let start = Instant::now();
        for index in 0..args.deals {
            for (policies, a_team) in [([a, b], 0u8), ([b, a], 1u8)] {
                let p = play(&hooks, args.seed, index, policies)?;
                match p.winner {
                    Some(w) => a_wins += u64::from(w == a_team),
                    None => unfinished += 1,
                }
                deals += u64::from(p.deals);
                decisions += p.decisions;
            }
        }
        let matches = 2 * args.deals;
        Ok(serde_json::json!({
            "game": "shengji",
            "a": args.a,
            "b": args.b,
            "seed": args.seed,
            "matches": matches,
            "a_match_wins": a_wins,
            "a_win_rate": if matches > 0 { a_wins as f64 / matches as f64 } else { 0.0 },
            "unfinished": unfinished,
            "deals": deals,
            "decisions": decisions,
            "illegal_decisions": 0,
            "seconds": start.elapsed().as_secs_f64(),
        }))
    };
    match run() {
        Ok(out) if args.json => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Ok(out) => {
            println!(
                "shengji arena: {} (team A) vs {}: {} of {} matches won by {} ({:.3}), {} deals, {} decisions, 0 illegal",
                args.a,
                args.b,
                out["a_match_wins"],
                out["matches"],
                args.a,
                out["a_win_rate"].as_f64().unwrap_or(0.0),
                out["deals"],
                out["decisions"]
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("arena: {e}");
            ExitCode::from(2)
        }
    }
}

/// Arguments of `shuangkou rules follow`.
#[derive(Debug, clap::Args)]
pub struct FollowArgs {
    /// The game (only `shengji` has tricks of one card).
    #[arg(long, value_enum, default_value_t = super::Game::Shengji)]
    pub game: super::Game,
    /// The level played, 2..=14 (J = 11, Q = 12, K = 13, A = 14).
    #[arg(long)]
    pub level: u8,
    /// The trump suit: S, H, C or D.
    #[arg(long)]
    pub trump: String,
    /// The hand, e.g. `"AS 7H TC SJ"` (rank then suit; SJ / BJ the jokers).
    #[arg(long, default_value = "")]
    pub hand: String,
    /// The cards of the trick so far in play order (the first one led).
    #[arg(long, default_value = "")]
    pub trick: String,
}

fn suit_of(s: &str) -> Result<Suit, String> {
    match s.trim().to_ascii_uppercase().as_str() {
        "S" => Ok(Suit::Spades),
        "H" => Ok(Suit::Hearts),
        "C" => Ok(Suit::Clubs),
        "D" => Ok(Suit::Diamonds),
        other => Err(format!("no suit {other:?} (S, H, C, D)")),
    }
}

/// One-deck cards by name: rank then suit (`AS`, `TH`), or `SJ` / `BJ`.
fn cards(text: &str) -> Result<Vec<Card>, String> {
    text.split_whitespace()
        .map(|name| {
            let up = name.to_ascii_uppercase();
            if up == "SJ" || up == "BJ" {
                let rank: Rank = up.parse().map_err(|e| format!("{name}: {e}"))?;
                return Ok(Card::from_parts(0, Suit::Spades, rank));
            }
            let split = up.len().saturating_sub(1);
            let (rank, suit) = up.split_at(split);
            let rank: Rank = rank.parse().map_err(|e| format!("{name}: {e}"))?;
            Ok(Card::from_parts(0, suit_of(suit)?, rank))
        })
        .collect()
}

/// `shuangkou rules follow`: the legal cards of the hand against the trick, and the winner of a
/// complete trick (4 cards).
pub fn follow(a: &FollowArgs) -> ExitCode {
    let run = || -> Result<serde_json::Value, String> {
        if a.game != super::Game::Shengji {
            return Err("rules follow is the 升級 question (--game shengji)".into());
        }
        let order = Order {
            level: Level::new(a.level).ok_or("the level is 2..=14")?,
            trump: suit_of(&a.trump)?,
        };
        let hand: CardSet = cards(&a.hand)?.into_iter().collect();
        let trick = cards(&a.trick)?;
        let names = |set: CardSet| -> Vec<String> {
            let mut v: Vec<Card> = set.iter().collect();
            v.sort_by_key(|&c| std::cmp::Reverse(order.strength(c)));
            v.iter().map(|c| c.to_string()).collect()
        };
        Ok(serde_json::json!({
            "trumps_in_hand": names(order.trumps().intersection(hand)),
            "legal": names(order.legal_cards(hand, trick.first().copied())),
            "trick_winner": (trick.len() == 4)
                .then(|| order.trick_winner(&trick))
                .flatten(),
        }))
    };
    match run() {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rules follow: {e}");
            ExitCode::from(2)
        }
    }
}
