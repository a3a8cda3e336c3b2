//! The 升級 rule bot: always legal over whole matches, a function of the view only (the same view
//! with other hidden cards gives the same decision), and its rules in hand-built spots: feeding
//! points to a partner's winning trick, keeping trumps, taking a trick cheaply, leading from its
//! long suit, declaring and burying.

pub mod shengji_support;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use shengji_support::{c, permute, permuted_replay, random_prefix, set, started, visible};
use shuangkou::cards::Suit;
use shuangkou::seat::{Player, Seat};
use shuangkou::shengji::bot::RuleBot;
use shuangkou::shengji::order::{ONE_DECK, points_of};
use shuangkou::shengji::sim::match_seed;
use shuangkou::shengji::{Action, Game, Order, Phase, Setup, StandardHooks, View, Viewer};

/// One action of a table of four bots: a declaration if some seat wants one, else the next step.
fn bots_step(g: &Game, bots: &[RuleBot; 4]) -> Option<Action> {
    match g.phase() {
        Phase::Finished => None,
        Phase::Dealing => (0..4u8)
            .find_map(|s| bots[usize::from(s)].decide(&g.view(Viewer::Player(Player::new(s)))))
            .or(Some(Action::Deal)),
        _ => {
            let s = g.turn()?;
            bots[s.index()].decide(&g.view(Viewer::Player(Player::new(s.number()))))
        }
    }
}

#[test]
fn bots_play_whole_matches_legally() {
    for hooks in [
        StandardHooks::default(),
        StandardHooks {
            bury_points: false,
            ..StandardHooks::default()
        },
    ] {
        let (mut deals, mut declared, mut finished) = (0, 0, 0);
        for index in 0..12u64 {
            let (mut g, _) = Game::new(Setup::seeded(match_seed(31, index))).unwrap();
            let bots = [0, 1, 2, 3].map(|s| RuleBot {
                seed: index * 10 + s,
                bury_points: hooks.bury_points,
            });
            let mut steps = 0;
            while let Some(action) = bots_step(&g, &bots) {
                let ctx = format!("match {index} step {steps}: {action:?}");
                let events = g
                    .apply(&hooks, action)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                for e in events {
                    match e {
                        shuangkou::shengji::Event::DealEnded(r) => {
                            deals += 1;
                            if !hooks.bury_points {
                                assert_eq!(r.buried_points, 0, "{ctx}");
                            }
                        }
                        shuangkou::shengji::Event::Declared { .. } => declared += 1,
                        shuangkou::shengji::Event::MatchEnded { .. } => finished += 1,
                        _ => {}
                    }
                }
                steps += 1;
                assert!(steps < 20_000, "match {index} does not end");
            }
        }
        assert!(
            finished == 12 && deals > 24,
            "{deals} deals, {finished} matches"
        );
        assert!(
            declared > deals / 2,
            "bots declared in {declared} of {deals} deals"
        );
    }
}

#[test]
fn the_same_view_with_other_hidden_cards_gives_the_same_decision() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut compared = 0;
    for index in 0..60u64 {
        let cut = rng.random_range(20..=97);
        let (a, log, _) = random_prefix(match_seed(41, index), cut, &mut rng);
        let seat = a.turn().unwrap_or(Seat::new(index as u8 % 4));
        let viewer = Viewer::Player(Player::new(seat.number()));
        let map = permute(&a, ONE_DECK.difference(visible(&a, viewer)), &mut rng);
        let (b, _) = permuted_replay(&a, &log, &map);
        assert_ne!(a.deck(), b.deck());
        let bot = RuleBot::new(index);
        let (da, db) = (bot.decide(&a.view(viewer)), bot.decide(&b.view(viewer)));
        assert_eq!(da, db, "match {index} cut {cut} seat {seat}");
        compared += usize::from(da.is_some());
    }
    assert!(compared > 30, "only {compared} decisions compared");
}

/// A view of seat `seat` in play at level 2, trump ♥, holding `hand`, with `trick` on the table.
fn spot(seat: u8, hand: &str, trick: &[(u8, &str)]) -> View {
    let g = started(0, [2, 2], ["", "", "", ""], "");
    let mut v = g.view(Viewer::Player(Player::new(seat)));
    let order = Order {
        level: shengji_support::level(2),
        trump: Suit::Hearts,
    };
    v.phase = Phase::Playing;
    v.trump = Some(Suit::Hearts);
    v.turn = Some(Seat::new(seat));
    v.hand = set(hand);
    v.trick = trick.iter().map(|&(s, n)| (Seat::new(s), c(n))).collect();
    v.legal = order.legal_cards(v.hand, v.trick.first().map(|&(_, card)| card));
    v
}

fn played(v: &View) -> shuangkou::cards::Card {
    match RuleBot::new(1).decide(v) {
        Some(Action::Play { card, .. }) => card,
        other => panic!("{other:?}"),
    }
}

/// The rule bot at [`spot`]`(seat, hand, trick)` plays `want`.
fn assert_plays(seat: u8, hand: &str, trick: &[(u8, &str)], want: &str) {
    assert_eq!(
        played(&spot(seat, hand, trick)),
        c(want),
        "seat {seat} holding {hand} on {trick:?}"
    );
}

#[test]
fn feeds_points_to_a_partner_winning_the_trick() {
    // Partner (seat 0) leads A♠, seat 1 follows Q♠: seat 2 puts its K♠ (10 points) on it.
    assert_plays(2, "KS 3S 4C", &[(0, "AS"), (1, "QS")], "KS");
    // The most points it can: K♠ before 5♠.
    assert_plays(2, "5S KS 3S", &[(0, "AS"), (1, "QS")], "KS");
    // Partner winning a trump lead and seat 2 void in trumps: it throws its 10, not the 3.
    assert_plays(2, "TC 3C 9S", &[(0, "4H"), (1, "3H")], "TC");
    // An opponent winning instead: the 10 is kept, the 3 thrown.
    assert_plays(2, "TC 3C 9S", &[(0, "3H"), (1, "4H")], "3C");
}

#[test]
fn keeps_trumps_unless_the_trick_has_points() {
    // An opponent wins a pointless spade trick; seat 3 is void: it throws a low club.
    assert_plays(3, "3H 4H 6C 7C", &[(0, "9S"), (1, "3S"), (2, "AS")], "6C");
    // With a K in the trick, it trumps in with its lowest trump.
    assert_plays(3, "3H 4H 6C 7C", &[(0, "9S"), (1, "KS"), (2, "AS")], "3H");
}

#[test]
fn takes_a_trick_with_its_lowest_winning_card_and_otherwise_plays_low() {
    assert_plays(1, "QS AS 3S 4C", &[(0, "JS")], "QS");
    // Cannot beat A♠: the lowest spade, points kept.
    assert_plays(1, "KS 3S 4C", &[(0, "AS")], "3S");
}

#[test]
fn leads_aces_then_from_its_longest_side_suit() {
    assert_plays(0, "3C 4C 8C 9D QD 4H", &[], "3C");
    assert_plays(0, "AD 3C 4C 8C 4H", &[], "AD");
    // Only trumps: the lowest trump.
    assert_plays(0, "BJ 2S 4H 9H", &[], "4H");
}

#[test]
fn declares_a_long_trump_suit_and_buries_side_cards() {
    let g = started(0, [2, 2], ["", "", "", ""], "");
    let mut v = g.view(Viewer::Player(Player::new(1)));
    v.hand = set("2H 5H 7H 9H QH 3S");
    v.stock_count = 30;
    let bot = RuleBot::new(3);
    assert_eq!(
        bot.decide(&v),
        Some(Action::Declare {
            seat: Seat::new(1),
            card: c("2H")
        })
    );
    v.hand = set("2H 3S 4C 5D 6S 7C");
    assert_eq!(bot.decide(&v), None, "a short suit waits");
    v.declaration = Some((Seat::new(0), c("2S")));
    v.hand = set("2H 5H 7H 9H QH 3S");
    assert_eq!(bot.decide(&v), None, "the first declaration stands");
    // Burying: 18 cards, trump ♥ at level 2: six side non-point cards, short suits first, no ace.
    let mut v = g.view(Viewer::Player(Player::new(0)));
    v.phase = Phase::Exchange;
    v.turn = Some(Seat::new(0));
    v.trump = Some(Suit::Hearts);
    v.hand = set("BJ 2H 2S AH 9H 3H 3C 4C AC 6D 7D KD 5S 8S 9S JS QS AS");
    let Some(Action::Bury { seat, cards }) = bot.decide(&v) else {
        panic!()
    };
    assert_eq!(seat, Seat::new(0));
    let order = Order {
        level: shengji_support::level(2),
        trump: Suit::Hearts,
    };
    assert_eq!(cards.len(), 6);
    assert!(cards.intersection(order.trumps()).is_empty(), "{cards:?}");
    assert_eq!(points_of(cards), 0, "{cards:?}");
    assert!(!cards.contains(c("AC")) && !cards.contains(c("AS")));
    // Clubs (3) and diamonds (3) are the short suits: 3♣ 4♣ 6♦ 7♦ go first.
    assert!(set("3C 4C 6D 7D").is_subset(cards), "{cards:?}");
}
