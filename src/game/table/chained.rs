//! The encoding the chained state hash ([`HashScheme::Chained`]) is computed over: the state
//! with an empty list of settled deals, then the running digest that stands for them.
//!
//! [`Bare`] borrows every field of a [`Game`] and serializes exactly as the game would with its
//! `results` list emptied (the same fields, in declaration order, through the same serde
//! representations; a borrowed value serializes as the value itself), so the hash needs no copy
//! of the state (a copy allocates every per-seat list, on every action). The destructuring in
//! `bare!` names every field of `Game` without `..`: a field added to `Game` fails to compile
//! here until it is added to `Bare` too.
//!
//! [`HashScheme::Chained`]: super::HashScheme::Chained

use serde::Serialize;

use super::{DealResult, Game, GameConfig, Phase, Top};
use crate::cards::{Card, CardSet};
use crate::determinism::{Encoding, state_hash};
use crate::game::hooks::{BombFact, Centi};
use crate::rules::Rules;
use crate::seat::{Seat, Seating};

/// A game, borrowed, as it serializes with no settled deals (field for field as [`Game`]).
#[derive(Serialize)]
struct Bare<'a> {
    config: &'a GameConfig,
    #[serde(serialize_with = "compact_rules")]
    rules: &'a Rules,
    partners_see_hands: &'a bool,
    seed: &'a [u8; 32],
    preset: &'a Option<Vec<CardSet>>,
    phase: &'a Phase,
    seq: &'a u64,
    deal_number: &'a u32,
    seating: &'a Seating,
    hands: &'a [CardSet],
    dealt: &'a CardSet,
    shown_card: &'a Card,
    turn: &'a Seat,
    trick_leader: &'a Seat,
    top: &'a Option<Top>,
    passed: &'a u8,
    out: &'a [Seat],
    bombs: &'a [BombFact],
    deadline: &'a Option<u64>,
    timeouts: &'a [u32],
    disconnected: &'a [Option<u64>],
    totals: &'a [Centi],
    /// Always empty: the digest after the struct stands for the settled deals.
    results: &'a [DealResult],
}

/// `Game`'s `rules` representation (`#[serde(with = "crate::rules::compact")]`), for a borrow.
fn compact_rules<S: serde::Serializer>(rules: &&Rules, s: S) -> Result<S::Ok, S::Error> {
    crate::rules::compact::serialize(rules, s)
}

/// A [`Bare`] of a game and the digest of its settled deals. The field list, written once,
/// names every field of [`Game`] but `results`; the destructuring has no `..`, so a field added
/// to `Game` fails to compile here until it is named (and added to `Bare`).
macro_rules! bare {
    ($game:expr; $($field:ident),+ $(,)?) => {{
        let Game { $($field,)+ results } = $game;
        (Bare { $($field,)+ results: &[] }, &results.digest)
    }};
}

/// The chained state hash of `game`: SHA-256 (hex) of the compact encoding of the game with an
/// empty results list, followed by the digest of every settled deal.
pub(super) fn chained_hash(game: &Game) -> String {
    let (bare, digest) = bare!(game;
        config, rules, partners_see_hands, seed, preset, phase, seq, deal_number, seating,
        hands, dealt, shown_card, turn, trick_leader, top, passed, out, bombs, deadline,
        timeouts, disconnected, totals,
    );
    state_hash(&(&bare, digest), Encoding::Compact)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::super::{Action, Entry, HashScheme, RESULTS_KEPT};
    use super::*;
    use crate::game::testing::{PlainHooks, random_turn};

    /// The chained hash as it was computed before [`Bare`] (the oracle): a copy of the whole
    /// state with its settled deals blanked, then the digest.
    fn hash_of_a_blanked_copy(game: &Game) -> String {
        let mut bare = game.clone();
        bare.results.list = std::sync::Arc::default();
        state_hash(&(&bare, &game.results.digest), Encoding::Compact)
    }

    /// Plays a seeded match of random legal actions (plays, passes, timeouts, disconnections)
    /// and checks the borrowed encoding against the blanked copy after every accepted action;
    /// returns how many deals were settled.
    fn check_a_match(rules: Rules, deals: u32, seed: u64) -> u32 {
        let hooks = PlainHooks::new(rules);
        let mut config = GameConfig::new("plain", "test", deals);
        config.turn_ms = Some(30_000);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game_seed = [0u8; 32];
        rng.fill(&mut game_seed);
        let (mut game, _) = Game::new(config, &hooks, game_seed, None, 0).unwrap();
        let mut at = 0u64;
        let mut steps = 0;
        while game.phase() == Phase::Playing && steps < 20_000 {
            steps += 1;
            at += 1;
            let Some(seat) = game.turn() else { break };
            let player = game.seating()[seat];
            let action = match rng.random_range(0..100) {
                0 => Action::Disconnect,
                1 => Action::Reconnect,
                2 => {
                    at += 40_000;
                    Action::Timeout
                }
                _ => random_turn(&game, seat, &mut rng).unwrap(),
            };
            // A rejected action leaves the game as it was: nothing new to compare.
            if game.apply(&hooks, Entry { player, action, at }).is_ok() {
                assert_eq!(
                    game.state_hash_with(HashScheme::Chained),
                    hash_of_a_blanked_copy(&game),
                    "seed {seed}, step {steps}, deal {}, {} settled",
                    game.deal_number(),
                    game.results_settled()
                );
            }
        }
        game.results_settled()
    }

    #[test]
    fn the_borrowed_encoding_hashes_as_the_blanked_copy_did() {
        let mut longest = 0;
        for seed in 0..4 {
            longest = longest.max(check_a_match(Rules::CLASSIC, 20, seed));
            longest = longest.max(check_a_match(Rules::ERREN, 20, 100 + seed));
        }
        // A match went past the kept window: the hash ran with a full list blanked.
        assert!(
            longest > RESULTS_KEPT as u32,
            "at most {longest} deals settled"
        );
    }
}
