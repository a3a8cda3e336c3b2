//! Random simulation (OpenSpiel-style): plays random legal games and checks every invariant
//! after every step. Used by `shuangkou simulate`, the random-simulation tests and benchmarks.
//!
//! Invariants: all 108 cards accounted for exactly once (hands, table, unused); only the seat to
//! act can act; a rejected action changes nothing; the seat to act always has a legal action; a
//! deal ends within a bound; places are a permutation; settlements obey the variant's sum rule;
//! replaying the log reproduces every state hash; snapshots round-trip through serde.
//!
//! Besides plays and passes the simulated players leave (escape), let their turn time out (the
//! engine's automatic play, or an escape after too many), and drop their connection: they come
//! back, or stay away until the reconnect window runs out. Early timeouts, reconnects of a
//! connected player and expiries within the window are tried too: each is refused and changes
//! nothing. Time is a counter of milliseconds that jumps to a deadline when one must pass.

use std::collections::BTreeMap;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::hooks::{Outcome, VariantHooks};
use super::table::{Action, Entry, Event, Game, GameConfig, Phase};
use crate::cards::CardSet;
use crate::seat::{Player, Seat};

/// What a simulation found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SimReport {
    pub games: u64,
    pub deals: u64,
    pub actions: u64,
    /// Turn timeouts applied (automatic plays and passes, or escapes).
    pub timeouts: u64,
    /// Disconnects, reconnects and expired reconnect windows applied.
    pub disconnects: u64,
    pub reconnects: u64,
    pub expired: u64,
    /// Deals by outcome name (`double`, `single`, `draw`, `escape`).
    pub outcomes: BTreeMap<String, u64>,
    /// Invariant violations, each with the seed that reproduces it.
    pub violations: Vec<String>,
}

/// How thoroughly to check.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Check invariants after every step (otherwise only play).
    pub check: bool,
    /// Deals per game (match length).
    pub deals_per_game: u32,
    /// Probability of passing when passing is legal (the rest: a uniform legal play).
    pub pass_probability: f64,
    /// Probability per game of an escape at a random step.
    pub escape_probability: f64,
    /// Probability per decision that the seat to act lets its turn time out.
    pub timeout_probability: f64,
    /// Probability per decision that a connected player drops its connection.
    pub disconnect_probability: f64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            check: true,
            deals_per_game: 2,
            pass_probability: 0.3,
            escape_probability: 0.05,
            timeout_probability: 0.02,
            disconnect_probability: 0.005,
        }
    }
}

/// Most actions a deal may take (27 cards × 4 seats, each play at least one card, with passes
/// and 接風 between): far above any real deal.
pub const MAX_ACTIONS_PER_DEAL: u64 = 2_000;

/// Violations after which a simulation stops.
pub const MAX_VIOLATIONS: usize = 10;

/// The turn time of simulated games (ms); time advances 1 ms per action otherwise.
const TURN_MS: u64 = 1_000;

/// Plays exactly `deals` deals (in matches of `options.deals_per_game`; the last match is
/// shortened to the deals left) from `seed`.
pub fn simulate(
    hooks: &dyn VariantHooks,
    variant: &str,
    deals: u64,
    seed: u64,
    options: SimOptions,
) -> SimReport {
    let mut report = SimReport::default();
    let mut game_index = 0u64;
    // A game that fails stops before its deals end: stop after a few failures, so that an
    // engine that breaks every game does not keep the loop going for ever.
    while report.deals < deals && report.violations.len() < MAX_VIOLATIONS {
        let game_seed = seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(game_index);
        game_index += 1;
        let left = u32::try_from(deals - report.deals).unwrap_or(u32::MAX);
        let this_game = SimOptions {
            deals_per_game: options.deals_per_game.min(left),
            ..options
        };
        if let Err(v) = play_game(hooks, variant, game_seed, this_game, &mut report) {
            report.violations.push(format!(
                "seed {seed} game {game_index} (game seed {game_seed}): {v}"
            ));
        }
        report.games += 1;
    }
    report
}

fn card_check(game: &Game) -> Result<(), String> {
    let n = game.players();
    let mut all = CardSet::EMPTY;
    let mut count = 0;
    for s in Seat::all(n) {
        let h = game.hand(s);
        if !h.intersection(all).is_empty() {
            return Err(format!("a card is in two hands (seat {s})"));
        }
        all = all.union(h);
        count += h.len();
    }
    let played = game.played();
    let unused = game.unused();
    if !played.intersection(all).is_empty()
        || !unused.intersection(all).is_empty()
        || !played.intersection(unused).is_empty()
    {
        return Err("a card is in two places".into());
    }
    if count + played.len() + unused.len() != 108 {
        return Err(format!(
            "{} cards accounted for",
            count + played.len() + unused.len()
        ));
    }
    Ok(())
}

fn play_game(
    hooks: &dyn VariantHooks,
    variant: &str,
    game_seed: u64,
    options: SimOptions,
    report: &mut SimReport,
) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(game_seed);
    let mut seed = [0u8; 32];
    rng.fill(&mut seed);
    let config = GameConfig {
        turn_ms: Some(TURN_MS),
        ..GameConfig::new(variant, "sim", options.deals_per_game)
    };
    let (mut game, _) =
        Game::new(config.clone(), hooks, seed, None, 0).map_err(|e| e.to_string())?;
    let n = game.players();
    let mut log: Vec<Entry> = Vec::new();
    let mut hashes: Vec<String> = Vec::new();
    let escape_at = rng
        .random_bool(options.escape_probability)
        .then(|| rng.random_range(1..200u64));
    let mut deal_actions = 0u64;
    let sum_rule = hooks.sum_rule();
    // The simulated clock (ms) and when each player dropped its connection.
    let mut now = 0u64;
    let mut away_since: Vec<Option<u64>> = vec![None; n as usize];
    // The legal plays of the seat to act, refilled at every decision.
    let mut plays = Vec::new();
    while game.phase() == Phase::Playing {
        let seat = game.turn().ok_or("playing without a seat to act")?;
        let player = game
            .seating()
            .player_at(seat)
            .ok_or("the seat to act has no player")?;
        now += 1;
        if options.check {
            card_check(&game)?;
            // Only the seat to act can act: another seat's pass is rejected and changes nothing;
            // so are a timeout before the deadline (of a connected seat: a disconnected one may
            // be played for at once), a reconnect of a connected player and an expiry within the
            // reconnect window.
            let other = game
                .seating()
                .player_at(seat.next(n))
                .ok_or("a seat without a player")?;
            let mut refused = vec![(other, Action::Pass, now, "a pass out of turn")];
            if game.deadline().is_some_and(|d| now < d) && !game.is_disconnected(player) {
                refused.push((
                    player,
                    Action::Timeout,
                    now,
                    "a timeout before the deadline",
                ));
            }
            if !game.is_disconnected(player) {
                refused.push((
                    player,
                    Action::Reconnect,
                    now,
                    "a reconnect while connected",
                ));
            }
            if let Some(p) = Player::all(n)
                .find(|&p| away_since[p.index()].is_some_and(|t| now < t + config.reconnect_ms))
            {
                refused.push((
                    p,
                    Action::ReconnectExpired,
                    now,
                    "an expiry within the window",
                ));
            }
            let before = game.clone();
            for (p, a, at, what) in refused {
                let e = Entry {
                    player: p,
                    action: a,
                    at,
                };
                if game.apply(hooks, e).is_ok() {
                    return Err(format!("{what} was accepted ({e:?})"));
                }
                if game != before {
                    return Err(format!("{what}, rejected, changed the state"));
                }
            }
        }
        let can_pass = game.legal_plays_into(seat, &mut plays);
        if plays.is_empty() && !can_pass {
            return Err(format!("seat {seat} has no legal action"));
        }
        let away: Vec<Player> = Player::all(n)
            .filter(|&p| game.is_disconnected(p))
            .collect();
        let action = if escape_at == Some(log.len() as u64) {
            Entry {
                player,
                action: Action::Leave,
                at: now,
            }
        } else if let Some(&p) = away.first().filter(|_| rng.random_bool(0.2)) {
            // A player who is away comes back, or (less often) its window runs out.
            let since = away_since[p.index()].unwrap_or(now);
            if rng.random_bool(0.7) {
                report.reconnects += 1;
                away_since[p.index()] = None;
                Entry {
                    player: p,
                    action: Action::Reconnect,
                    at: now,
                }
            } else {
                report.expired += 1;
                now = now.max(since + config.reconnect_ms);
                away_since[p.index()] = None;
                Entry {
                    player: p,
                    action: Action::ReconnectExpired,
                    at: now,
                }
            }
        } else if rng.random_bool(options.disconnect_probability) {
            let p = Player::new(rng.random_range(0..n));
            if game.is_disconnected(p) {
                continue;
            }
            report.disconnects += 1;
            away_since[p.index()] = Some(now);
            Entry {
                player: p,
                action: Action::Disconnect,
                at: now,
            }
        } else if rng.random_bool(options.timeout_probability) {
            report.timeouts += 1;
            now = now.max(game.deadline().ok_or("a turn without a deadline")?);
            Entry {
                player,
                action: Action::Timeout,
                at: now,
            }
        } else if can_pass && (plays.is_empty() || rng.random_bool(options.pass_probability)) {
            Entry {
                player,
                action: Action::Pass,
                at: now,
            }
        } else {
            let p = plays.choose(&mut rng).ok_or("no play to choose")?;
            let cards = game
                .hand(seat)
                .take(p.cards)
                .ok_or("a legal play is not in the hand")?;
            let declared = Some(crate::hand::Declared {
                kind: p.hand.kind,
                key: p.hand.key(),
            });
            Entry {
                player,
                action: Action::Play { cards, declared },
                at: now,
            }
        };
        let events = game
            .apply(hooks, action)
            .map_err(|e| format!("legal action rejected: {e} ({action:?})"))?;
        log.push(action);
        report.actions += 1;
        deal_actions += 1;
        if deal_actions > MAX_ACTIONS_PER_DEAL {
            return Err("a deal did not end within the bound".into());
        }
        if options.check {
            let hash = game.state_hash();
            // Every action changes the state (its seq at least): an unchanged hash means the
            // encoding hashed nothing (a serialization failure) or dropped what changed.
            if hashes.last() == Some(&hash) {
                return Err(format!("state hash unchanged by {action:?}"));
            }
            hashes.push(hash);
        }
        for e in &events {
            if let Event::DealEnded(r) = e {
                deal_actions = 0;
                report.deals += 1;
                let name = r.outcome.map_or("escape", Outcome::name).to_string();
                *report.outcomes.entry(name).or_default() += 1;
                if options.check {
                    let mut sorted = r.places.clone();
                    sorted.sort_unstable();
                    if sorted != Seat::all(n).collect::<Vec<_>>() {
                        return Err(format!("places {:?} are not a permutation", r.places));
                    }
                    sum_rule
                        .check(&r.settlement)
                        .map_err(|e| format!("deal {}: {e}", r.deal_number))?;
                }
            }
        }
    }
    if options.check {
        let replayed = Game::new(config, hooks, seed, None, 0)
            .and_then(|(g, _)| g.replay(hooks, &log, Some(&hashes)))
            .map_err(|e| e.to_string())?;
        if replayed != game {
            return Err("replay reached a different final state".into());
        }
        let json = serde_json::to_string(&game).map_err(|e| e.to_string())?;
        let back: Game = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        if back != game {
            return Err("snapshot does not round-trip".into());
        }
    }
    Ok(())
}
