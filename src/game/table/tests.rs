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
        g.results.push(result(k, 400));
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
            .push(result(k, if k == 1 { 200 } else { 400 }));
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
        windowed.push(r.clone());
        whole.push(r.clone());
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
    assert_eq!(g.results_in(190..200), Some(&all[190..200]));
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
