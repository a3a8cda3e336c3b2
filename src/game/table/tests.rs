use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::*;
use crate::game::hooks::{Centi, Outcome, Settlement};
use crate::game::testing::PlainHooks;

/// A 4-player classic game whose hands and finishers are set directly.
fn game_with(out: &[u8], left: [&str; 4]) -> Game {
    let hooks = PlainHooks::new(Rules::CLASSIC);
    let config = GameConfig::new("places", "test", 1);
    let (mut g, _) = Game::new(config, &hooks, [3; 32], None, 0).unwrap();
    let deck = CardSet::FULL;
    for (seat, cards) in left.iter().enumerate() {
        let ranks: RankCounts = if cards.is_empty() {
            RankCounts::EMPTY
        } else {
            cards.parse().unwrap()
        };
        g.hands[seat] = deck.take(ranks).unwrap();
    }
    g.out = Seat::list(out);
    g
}

#[test]
fn places_after_a_double_follow_turn_order_from_the_second_out() {
    // S0-CL 「當雙扣的情況下按照出牌順序排定第三名和第四名」 (docs/rules/RULES.md A2, §1.5, §8 #24): N and S
    // went out; turn order after S is W, then E, although E holds fewer cards.
    let g = game_with(&[0, 2], ["", "3", "", "4 5 6 7 8"]);
    assert_eq!(g.places(), Seat::list(&[0, 2, 3, 1]));
    // S then N went out: E comes after N, then W.
    let g = game_with(&[2, 0], ["", "3 4 5 6", "", "7"]);
    assert_eq!(g.places(), Seat::list(&[2, 0, 1, 3]));
    // Not a 雙扣 (an escape with N and E out): fewer cards first, then turn order.
    let g = game_with(&[0, 1], ["", "", "4 5 6 7 8", "3"]);
    assert_eq!(g.places(), Seat::list(&[0, 1, 3, 2]));
}

fn result(deal_number: u32, score: Centi) -> DealResult {
    DealResult {
        deal_number,
        outcome: Some(Outcome::Double),
        escaped: None,
        places: Seat::list(&[0, 2, 1, 3]),
        players: Seating::from_players(Player::list(&[0, 1, 2, 3])),
        settlement: Settlement {
            scores: vec![score, -score, score, -score],
            lines: Vec::new(),
        },
    }
}

#[test]
fn the_chained_hash_covers_every_settled_deal_and_survives_a_round_trip() {
    let mut g = game_with(&[], ["3", "4", "5", "6"]);
    let mut seen = std::collections::HashSet::new();
    assert!(seen.insert(g.state_hash_with(HashScheme::Chained)));
    for k in 1..=3 {
        g.results.push(&result(k, 400));
        assert!(
            seen.insert(g.state_hash_with(HashScheme::Chained)),
            "deal {k}"
        );
    }
    // An earlier deal that differs changes the hash (the digest chains every result).
    let mut other = game_with(&[], ["3", "4", "5", "6"]);
    for k in 1..=3 {
        other
            .results
            .push(&result(k, if k == 1 { 200 } else { 400 }));
    }
    assert_ne!(
        other.state_hash_with(HashScheme::Chained),
        g.state_hash_with(HashScheme::Chained)
    );
    // Read back from either encoding, the digest is recomputed from the list.
    let back: Game = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
    assert_eq!(back, g);
    assert_eq!(
        back.state_hash_with(HashScheme::Chained),
        g.state_hash_with(HashScheme::Chained)
    );
    let back: Game = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
    assert_eq!(
        back.state_hash_with(HashScheme::Chained),
        g.state_hash_with(HashScheme::Chained)
    );
    // The older schemes still hash the whole list.
    assert_ne!(
        g.state_hash_with(HashScheme::Compact),
        g.state_hash_with(HashScheme::Chained)
    );
}

/// A long match keeps its latest `RESULTS_KEPT` deals, its digest and each player's losing
/// streak over the whole match; the oracles: the whole list kept (a whole-list scheme's
/// results), the digest folded over it, the streak counted back over it.
#[test]
fn a_long_match_keeps_its_latest_deals_and_whole_match_streaks() {
    use rand::SeedableRng;
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let mut windowed = Results::for_scheme(HashScheme::Chained);
    let mut whole = Results::for_scheme(HashScheme::Compact);
    let mut all = Vec::new();
    for k in 1..=200 {
        let mut r = result(k, 100 * k as Centi);
        r.places.rotate_left(rng.random_range(0..4));
        // Long losing runs for seats 1 and 3 (first place on team 0), the last 30 deals too.
        if k % 50 < 25 || k > 170 {
            r.places = Seat::list(&[0, 1, 2, 3]);
        }
        windowed.push(&r);
        whole.push(&r);
        all.push(r);
        let n = all.len();
        assert_eq!(windowed.settled() as usize, n);
        assert_eq!(
            windowed.kept(),
            &all[n.saturating_sub(RESULTS_KEPT)..],
            "deal {k}"
        );
        assert_eq!(whole.kept(), &all[..]);
        assert_eq!(windowed.digest, whole.digest);
        for player in Player::all(4) {
            let streak = all
                .iter()
                .rev()
                .take_while(|r| {
                    let mine = r.players.seat_of(player);
                    let first = r.places.first();
                    matches!((mine, first), (Some(m), Some(f)) if m.team() != f.team())
                })
                .count() as u32;
            assert_eq!(windowed.streaks.get(player.index()).copied(), Some(streak));
        }
    }
    let mut g = game_with(&[], ["3", "4", "5", "6"]);
    g.results = windowed;
    assert_eq!(g.results_first_kept(), 200 - RESULTS_KEPT as u32);
    assert_eq!(g.results_in(190..200), Some(all[190..200].to_vec()));
    assert_eq!(g.results_in(0..10), None, "not kept");
    assert_eq!(g.results_in(195..201), None, "past the deals settled");
    // Deals 150 to 200 (150..=174 and 171..=200): longer than the deals kept.
    assert_eq!(g.lost_streak(Player::new(1)), 51);
    assert_eq!(g.lost_streak(Player::new(0)), 0);
}

mod encoding {
    use super::*;
    use crate::game::testing::PlainHooks;
    use crate::rules::EqualStarBombs;

    fn game(rules: Rules) -> Game {
        let config = GameConfig::new("encoding", "test", 1);
        Game::new(config, &PlainHooks::new(rules), [5; 32], None, 0)
            .unwrap()
            .0
    }

    #[test]
    fn every_equal_star_setting_round_trips_in_both_encodings() {
        let first = Rules {
            equal_star_bombs: EqualStarBombs::FirstStands,
            ..Rules::HUOPIN
        };
        let default = game(Rules::HUOPIN);
        for g in [default.clone(), game(first)] {
            let compact = postcard::to_allocvec(&g).unwrap();
            assert_eq!(postcard::from_bytes::<Game>(&compact).unwrap(), g);
            let json = serde_json::to_string(&g).unwrap();
            assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), g);
        }
        // The default adds no byte: the same state as before the setting existed.
        let with = game(first);
        assert_eq!(
            postcard::to_allocvec(&with).unwrap().len(),
            postcard::to_allocvec(&default).unwrap().len()
        );
        assert_ne!(with.state_hash(), default.state_hash());
    }
}

/// What a game keeps of its settled deals (compact, decoded where read) reads back as the
/// results themselves, over seeded long matches; the oracle: every `DealEnded` event's result,
/// kept apart as it was emitted, and the digest folded over their postcard encodings.
mod kept_results {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::game::testing::{PlainHooks, random_turn};

    /// Plays `deals` deals of seeded random legal plays and passes, checking the kept deals
    /// against the events' results at every deal's end; returns the game and the oracle list.
    fn play(rules: Rules, deals: u32, seed: u64, scheme: HashScheme) -> (Game, Vec<DealResult>) {
        let hooks = PlainHooks::new(rules);
        let config = GameConfig::new("kept", "test", deals);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut g, _) = Game::new(config, &hooks, [seed as u8; 32], None, 0).unwrap();
        g.keep_every_result(scheme);
        let mut all: Vec<DealResult> = Vec::new();
        let mut at = 0u64;
        while g.phase() == Phase::Playing {
            at += 1;
            let Some(seat) = g.turn() else { break };
            let player = g.seating()[seat];
            let action = random_turn(&g, seat, &mut rng).unwrap();
            let events = g.apply(&hooks, Entry { player, action, at }).unwrap();
            let ended = events.iter().filter_map(|e| match e {
                Event::DealEnded(r) => Some(r.clone()),
                _ => None,
            });
            let before = all.len();
            all.extend(ended);
            if all.len() > before {
                check(&g, &all, scheme, seed, &mut rng);
            }
        }
        (g, all)
    }

    /// The kept deals, a random page of them, the pages outside them, the digest and the
    /// serialized list, against the oracle.
    fn check(g: &Game, all: &[DealResult], scheme: HashScheme, seed: u64, rng: &mut ChaCha8Rng) {
        let n = all.len() as u32;
        let keep = if scheme == HashScheme::Chained {
            RESULTS_KEPT.min(all.len())
        } else {
            all.len()
        };
        let first = n - keep as u32;
        let at = format!("seed {seed}, {scheme:?}, after deal {n}");
        assert_eq!(g.results_settled(), n, "{at}");
        assert_eq!(g.results_first_kept(), first, "{at}");
        assert_eq!(g.results(), &all[first as usize..], "{at}");
        let a = rng.random_range(first..=n);
        let b = rng.random_range(a..=n);
        assert_eq!(
            g.results_in(a..b).as_deref(),
            Some(&all[a as usize..b as usize]),
            "{at}: page {a}..{b}"
        );
        assert_eq!(g.results_in(a..n + 1), None, "{at}: past the deals settled");
        if first > 0 {
            assert_eq!(
                g.results_in(first - 1..n),
                None,
                "{at}: before the first kept"
            );
        }
        let digest = all.iter().fold([0u8; 32], |d, r| {
            let mut h = Sha256::new();
            h.update(d);
            h.update(postcard::to_stdvec(r).unwrap());
            h.finalize().into()
        });
        assert_eq!(g.results.digest, digest, "{at}: the chained digest");
        // What the state's encodings (a whole-list hash, the JSON view of the state) write.
        let kept = &all[first as usize..];
        assert_eq!(
            postcard::to_stdvec(&g.results).unwrap(),
            postcard::to_stdvec(kept).unwrap(),
            "{at}"
        );
        assert_eq!(
            serde_json::to_string(&g.results).unwrap(),
            serde_json::to_string(kept).unwrap(),
            "{at}"
        );
        assert!(g.results.ends_with(&kept[keep.saturating_sub(2)..]), "{at}");
    }

    #[test]
    fn the_kept_deals_read_back_as_the_results_the_deals_ended_with() {
        for seed in 0..3 {
            let (g, all) = play(Rules::CLASSIC, 40, seed, HashScheme::Chained);
            assert!(all.len() > RESULTS_KEPT, "seed {seed}: {} deals", all.len());
            // A changed deal is not the tail kept.
            let mut other = all[all.len() - 2..].to_vec();
            other[0].settlement.scores[0] += 1;
            assert!(!g.results.ends_with(&other), "seed {seed}");
            let back: Game = postcard::from_bytes(&postcard::to_stdvec(&g).unwrap()).unwrap();
            assert_eq!(back.results(), g.results(), "seed {seed}");
        }
        let (_, all) = play(Rules::ERREN, 30, 9, HashScheme::Chained);
        assert!(all.len() > RESULTS_KEPT);
        // A whole-list scheme keeps every deal.
        play(Rules::CLASSIC, 24, 11, HashScheme::Compact);
    }
}
