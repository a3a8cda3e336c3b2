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
use crate::determinism::{Encoding, HashPrefix, state_hash_from};
use crate::game::hooks::{BombFact, Centi};
use crate::rules::Rules;
use crate::seat::{Seat, Seating};

/// A game, borrowed, as it serializes with no settled deals (field for field as [`Game`]; the
/// leading fields in [`Lead`], which postcard writes in line, as if they were `Bare`'s own).
#[derive(Serialize)]
struct Bare<'a> {
    lead: Lead<'a>,
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

/// The fields a game's encoding starts with, which no action changes but an escape's shorter
/// match (`config.deals`): the whole blocks of their encoding are the game's [`HashPrefix`].
#[derive(Serialize)]
struct Lead<'a> {
    config: &'a GameConfig,
    #[serde(serialize_with = "compact_rules")]
    rules: &'a Rules,
    partners_see_hands: &'a bool,
    seed: &'a [u8; 32],
    preset: &'a Option<Vec<CardSet>>,
}

/// `Game`'s `rules` representation (`#[serde(with = "crate::rules::compact")]`), for a borrow.
fn compact_rules<S: serde::Serializer>(rules: &&Rules, s: S) -> Result<S::Ok, S::Error> {
    crate::rules::compact::serialize(rules, s)
}

/// A [`Bare`] of a game and the digest of its settled deals. The field list, written once,
/// names every field of [`Game`] but `results`; the destructuring has no `..`, so a field added
/// to `Game` fails to compile here until it is named (and added to `Bare`).
macro_rules! bare {
    ($game:expr; $($lead:ident),+; $($field:ident),+ $(,)?) => {{
        let Game { $($lead,)+ $($field,)+ results } = $game;
        (
            Bare { lead: Lead { $($lead,)+ }, $($field,)+ results: &[] },
            &results.digest,
        )
    }};
}

/// The chained state hash of `game`: SHA-256 (hex) of the compact encoding of the game with an
/// empty results list, followed by the digest of every settled deal; resumed from `prefix`
/// when it is the game's ([`prefix`]), else hashed whole (the same hash either way).
pub(super) fn chained_hash(game: &Game, prefix: &HashPrefix) -> String {
    let (bare, digest) = bare!(game;
        config, rules, partners_see_hands, seed, preset;
        phase, seq, deal_number, seating, hands, dealt, shown_card, turn, trick_leader, top,
        passed, out, bombs, deadline, timeouts, disconnected, totals,
    );
    state_hash_from(&(&bare, digest), Encoding::Compact, prefix)
}

/// The [`HashPrefix`] of `game`'s encodings (the chained one's and the whole compact one's,
/// which both start with [`Lead`]): the whole blocks of its leading fields' encoding.
pub(super) fn prefix(game: &Game) -> HashPrefix {
    let lead = Lead {
        config: &game.config,
        rules: &game.rules,
        partners_see_hands: &game.partners_see_hands,
        seed: &game.seed,
        preset: &game.preset,
    };
    HashPrefix::new(&postcard::to_stdvec(&lead).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::super::{Action, Entry, HashScheme, RESULTS_KEPT};
    use super::*;
    use crate::determinism::state_hash;
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

    /// The chained encoding of `game`, as its hash serializes it.
    fn encoding(game: &Game) -> Vec<u8> {
        let (bare, digest) = bare!(game;
            config, rules, partners_see_hands, seed, preset;
            phase, seq, deal_number, seating, hands, dealt, shown_card, turn, trick_leader, top,
            passed, out, bombs, deadline, timeouts, disconnected, totals,
        );
        postcard::to_stdvec(&(&bare, digest)).unwrap()
    }

    /// A game's prefix (taken at its start, with a variant version of 64 hex digits as the
    /// service pins) covers the first two blocks of its chained and compact encodings after
    /// every action of a match, and the hash resumed from it is the hash computed whole; once
    /// an escape shortens the match (`config.deals`), it covers nothing and the hash is still
    /// the whole one.
    #[test]
    fn a_hash_resumed_from_the_games_prefix_is_the_whole_hash() {
        let hooks = PlainHooks::new(Rules::CLASSIC);
        let config = GameConfig::new("baibian", "0123456789abcdef".repeat(4), 3);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mut game, _) = Game::new(config, &hooks, [9; 32], None, 0).unwrap();
        let prefix = game.hash_prefix();
        assert_eq!(prefix.len(), 128);
        let (mut covered, mut steps) = (0, 0u64);
        while game.phase() == Phase::Playing && steps < 5_000 {
            steps += 1;
            let Some(seat) = game.turn() else { break };
            let player = game.seating()[seat];
            let action = match game.deal_number() {
                2 if steps % 50 == 0 => Action::Leave,
                _ => random_turn(&game, seat, &mut rng).unwrap(),
            };
            if game
                .apply(
                    &hooks,
                    Entry {
                        player,
                        action,
                        at: steps,
                    },
                )
                .is_err()
            {
                continue;
            }
            for scheme in [HashScheme::Chained, HashScheme::Compact, HashScheme::Json] {
                assert_eq!(
                    game.state_hash_from(scheme, &prefix),
                    game.state_hash_with(scheme),
                    "step {steps}, {scheme:?}"
                );
            }
            let shortened = game.config().deals != 3;
            assert_eq!(prefix.covers(&encoding(&game)), !shortened, "step {steps}");
            assert_eq!(
                prefix.covers(&postcard::to_stdvec(&game).unwrap()),
                !shortened
            );
            covered += u32::from(!shortened);
        }
        assert!(covered > 50, "{covered} actions hashed from the prefix");
        assert_eq!(
            game.config().deals,
            2,
            "the match was shortened by the escape"
        );
        assert_eq!(game.phase(), Phase::Finished);
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
