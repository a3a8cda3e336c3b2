//! Random simulation of 升級 matches with every invariant checked after every action: used by the
//! random-simulation tests and the benchmark.
//!
//! The driver declares at random while dealing (a level card of a random seat that holds one),
//! buries six random cards (no point cards where the hooks forbid them) and plays uniformly among
//! the legal cards. Invariants, after every action: the 54 cards are each in exactly one place
//! (hands, stock, bottom, cards played), 100 points in all, hand sizes as the phase says, every
//! card played was legal, an illegal card or a wrong seat is rejected and leaves the state hash
//! unchanged, and a deal's points add up (tricks + buried = 100). After every match, replaying the
//! log reproduces every state hash. Pure: no async, wire or script types.

use rand::seq::IteratorRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::game::{Action, Event, Game, GameError, Phase, Setup};
use super::hooks::ShengjiHooks;
use super::order::{DECK_POINTS, HAND_SIZE, ONE_DECK, SEATS, points, points_of};
use crate::cards::{Card, CardSet};
use crate::seat::Seat;

/// What a simulation found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct SimReport {
    pub matches: u64,
    pub finished_matches: u64,
    pub deals: u64,
    pub actions: u64,
    /// Deals in which the 莊家 side went up.
    pub dealer_kept: u64,
    /// Deals with 摳底 (the 閑家 won the last trick).
    pub kou_di: u64,
    /// Deals in which somebody declared.
    pub declared: u64,
    /// Invariant violations, each with the seed that reproduces it.
    pub violations: Vec<String>,
}

/// How a simulation runs.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Check invariants after every action (otherwise only play).
    pub check: bool,
    /// Chance per deal step that an eligible seat declares.
    pub declare_probability: f64,
    /// Deals after which an unfinished match is cut off.
    pub max_deals_per_match: u32,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            check: true,
            declare_probability: 0.05,
            max_deals_per_match: 40,
        }
    }
}

/// The seed of match `index` of a simulation seeded with `seed`.
pub fn match_seed(seed: u64, index: u64) -> [u8; 32] {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8..16].copy_from_slice(&index.to_le_bytes());
    s
}

/// A random action for the state, as the driver picks it.
pub fn random_action(
    game: &Game,
    hooks: &dyn ShengjiHooks,
    rng: &mut impl Rng,
    declare_probability: f64,
) -> Option<Action> {
    match game.phase() {
        Phase::Finished => None,
        Phase::Dealing => {
            if game.declaration().is_none() && rng.random_bool(declare_probability) {
                let level = game.level().rank();
                let choice = Seat::all(SEATS)
                    .flat_map(|s| {
                        game.hand(s)
                            .of_rank(level)
                            .iter()
                            .filter(|c| c.id() < 54)
                            .map(move |c| (s, c))
                    })
                    .choose(rng);
                if let Some((seat, card)) = choice {
                    return Some(Action::Declare { seat, card });
                }
            }
            Some(Action::Deal)
        }
        Phase::Exchange => {
            let seat = game.turn()?;
            let hand = game.hand(seat);
            let pool: Vec<Card> = hand
                .iter()
                .filter(|&c| hooks.bury_points_allowed() || points(c) == 0)
                .collect();
            let cards: CardSet = pool
                .iter()
                .copied()
                .choose_multiple(rng, 6)
                .into_iter()
                .collect();
            Some(Action::Bury { seat, cards })
        }
        Phase::Playing => {
            let seat = game.turn()?;
            let card = game.legal_cards(seat).iter().choose(rng)?;
            Some(Action::Play { seat, card })
        }
    }
}

/// Checks the state invariants; the error says which failed.
pub fn check_invariants(game: &Game) -> Result<(), String> {
    let hands: Vec<CardSet> = Seat::all(SEATS).map(|s| game.hand(s)).collect();
    let mut parts = hands.clone();
    match game.phase() {
        Phase::Dealing => parts.push(game.stock()),
        Phase::Exchange => {}
        Phase::Playing | Phase::Finished => parts.push(game.bottom()),
    }
    parts.push(game.played());
    let mut all = CardSet::EMPTY;
    let mut total = 0;
    for p in &parts {
        if !all.intersection(*p).is_empty() {
            return Err(format!("a card is in two places: {parts:?}"));
        }
        all = all.union(*p);
        total += p.len();
    }
    if game.phase() != Phase::Finished && (all != ONE_DECK || total != 54) {
        return Err(format!(
            "{total} cards accounted for, not the 54: {parts:?}"
        ));
    }
    if game.phase() != Phase::Finished
        && parts.iter().map(|p| points_of(*p)).sum::<u32>() != DECK_POINTS
    {
        return Err("the points do not add up to 100".into());
    }
    let sizes: Vec<usize> = hands.iter().map(|h| h.len()).collect();
    let expected: Vec<usize> = match game.phase() {
        Phase::Dealing => Seat::all(SEATS)
            .map(|s| {
                (0..game.dealt().min(48))
                    .filter(|i| (game.first_seat().number() + i % 4) % 4 == s.number())
                    .count()
            })
            .collect(),
        Phase::Exchange => Seat::all(SEATS)
            .map(|s| if game.turn() == Some(s) { 18 } else { 12 })
            .collect(),
        Phase::Playing => Seat::all(SEATS)
            .map(|s| {
                let in_trick = game.trick().iter().any(|&(t, _)| t == s) as usize;
                HAND_SIZE - game.tricks_played() as usize - in_trick
            })
            .collect(),
        Phase::Finished => sizes.clone(),
    };
    if sizes != expected {
        return Err(format!("hand sizes {sizes:?}, expected {expected:?}"));
    }
    if game.phase() == Phase::Playing && game.bottom().len() != 6 {
        return Err(format!("{} buried cards", game.bottom().len()));
    }
    Ok(())
}

/// Checks that an illegal action is rejected and changes nothing (the whole state compared).
fn check_rejection(
    game: &mut Game,
    hooks: &dyn ShengjiHooks,
    action: Action,
) -> Result<(), String> {
    let before = game.state_hash();
    match game.apply(hooks, action) {
        Ok(_) => Err(format!("illegal {action:?} was accepted")),
        Err(_) if game.state_hash() != before => {
            Err(format!("rejected {action:?} changed the state"))
        }
        Err(_) => Ok(()),
    }
}

/// An illegal action for the state, when the driver can name one: a card off the follow rule,
/// the wrong seat, a bury of five cards, a second declaration.
fn illegal_action(game: &Game, rng: &mut impl Rng) -> Option<Action> {
    match game.phase() {
        Phase::Playing => {
            let seat = game.turn()?;
            let hand = game.hand(seat);
            let off = hand.difference(game.legal_cards(seat));
            match off.iter().choose(rng) {
                Some(card) => Some(Action::Play { seat, card }),
                None => hand.iter().next().map(|card| Action::Play {
                    seat: seat.next(SEATS),
                    card,
                }),
            }
        }
        Phase::Exchange => {
            let seat = game.turn()?;
            let cards: CardSet = game.hand(seat).iter().take(5).collect();
            Some(Action::Bury { seat, cards })
        }
        Phase::Dealing => {
            let (seat, card) = game.declaration()?;
            Some(Action::Declare { seat, card })
        }
        Phase::Finished => None,
    }
}

/// Plays `matches` random matches from `seed`, checking every invariant when `options.check`.
pub fn simulate(
    hooks: &dyn ShengjiHooks,
    seed: u64,
    matches: u64,
    options: SimOptions,
) -> SimReport {
    let mut report = SimReport::default();
    for index in 0..matches {
        if let Err(e) = simulate_match(hooks, seed, index, options, &mut report) {
            report
                .violations
                .push(format!("seed {seed} match {index}: {e}"));
        }
    }
    report
}

fn simulate_match(
    hooks: &dyn ShengjiHooks,
    seed: u64,
    index: u64,
    options: SimOptions,
    report: &mut SimReport,
) -> Result<(), String> {
    let setup = Setup::seeded(match_seed(seed, index));
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (mut game, _) = Game::new(setup.clone()).map_err(|e| e.to_string())?;
    report.matches += 1;
    let mut log = Vec::new();
    let mut hashes = Vec::new();
    let bound = u64::from(options.max_deals_per_match) * 200;
    while game.deal_number() <= options.max_deals_per_match {
        let Some(action) = random_action(&game, hooks, &mut rng, options.declare_probability)
        else {
            break;
        };
        if options.check {
            if let Some(bad) = illegal_action(&game, &mut rng) {
                check_rejection(&mut game, hooks, bad)?;
            }
            if let Action::Play { seat, card } = action {
                if !game.legal_cards(seat).contains(card) {
                    return Err(format!("the driver picked an illegal {action:?}"));
                }
            }
        }
        let events = game
            .apply(hooks, action)
            .map_err(|e: GameError| format!("step {}: {action:?} rejected: {e}", log.len() + 1))?;
        report.actions += 1;
        log.push(action);
        if options.check {
            hashes.push(game.state_hash());
            check_invariants(&game).map_err(|e| format!("step {}: {e}", log.len()))?;
        }
        for e in &events {
            match e {
                Event::DealEnded(r) => {
                    report.deals += 1;
                    report.dealer_kept += u64::from(r.upgrade.side == super::hooks::Side::Dealer);
                    report.kou_di += u64::from(r.multiplier > 0);
                    if options.check
                        && r.trick_points[0] + r.trick_points[1] + r.buried_points != 100
                    {
                        return Err(format!(
                            "deal {}: points do not add up: {r:?}",
                            r.deal_number
                        ));
                    }
                }
                Event::Declared { .. } => report.declared += 1,
                Event::MatchEnded { .. } => report.finished_matches += 1,
                _ => {}
            }
        }
        if log.len() as u64 > bound {
            return Err("the match did not progress".into());
        }
    }
    if options.check {
        let replayed =
            Game::replay(setup, hooks, &log, Some(&hashes)).map_err(|e| e.to_string())?;
        if replayed != game {
            return Err("replay reproduced the hashes but not the state".into());
        }
    }
    Ok(())
}
