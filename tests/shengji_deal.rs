//! docs/rules/SHENGJI.md A2.2–A2.6 by hand-built decks: the deal as logged steps, 亮主 between them (first
//! declaration stands, jokers cannot declare, deal 1's first declarer deals), the no-declaration
//! rule on the bottom, the exchange (exactly 6, option bury_points), the follow rule and trick
//! winners in play. Every rejection is checked to change nothing.

pub mod shengji_support;

use shengji_support::{c, contested, deal_all, ok, seed_seat, set, started};
use shuangkou::cards::Suit;
use shuangkou::game::EngineError;
use shuangkou::seat::Seat;
use shuangkou::shengji::{Action, EffSuit, Event, Game, GameError, Phase, StandardHooks};

const H: StandardHooks = StandardHooks {
    bury_points: true,
    multiplier: 2,
    finish: shuangkou::shengji::Finish::ReachA,
};

/// Applies an action that must be rejected with `want`, and checks nothing changed.
/// The dealer, seat 0, buries six of its cards, none of `keep`.
fn bury_all_but(g: &mut Game, keep: &str) {
    let seat = Seat::new(0);
    let cards = g.hand(seat).difference(set(keep)).iter().take(6).collect();
    ok(g, &H, Action::Bury { seat, cards });
}

/// Seat `seat` shows `card` (亮主).
fn declare(seat: Seat, card: &str) -> Action {
    Action::Declare {
        seat,
        card: c(card),
    }
}

fn rejected(game: &mut Game, action: Action, want: GameError) {
    let before = game.clone();
    let hash = game.state_hash();
    assert_eq!(game.apply(&H, action), Err(want), "{action:?}");
    assert_eq!(*game, before, "rejected {action:?} changed the state");
    assert_eq!(game.state_hash(), hash);
}

#[test]
fn cards_are_dealt_one_at_a_time_in_turn_order_from_the_first_seat() {
    let mut g = started(2, [2, 2], ["AS", "AH", "AC", "AD"], "");
    let mut seats = Vec::new();
    for i in 0..48 {
        assert_eq!(g.dealt(), i);
        let ev = ok(&mut g, &H, Action::Deal);
        let [
            Event::CardDealt {
                seat,
                card: Some(card),
            },
        ] = ev[..]
        else {
            panic!("{ev:?}")
        };
        assert!(g.hand(seat).contains(card));
        assert_eq!(g.hand(seat).len(), i as usize / 4 + 1);
        seats.push(seat);
    }
    // Seat 2 (the dealer) first, then 3, 0, 1, …; its first card is the one named first.
    assert_eq!(&seats[..6], &Seat::list(&[2, 3, 0, 1, 2, 3])[..]);
    assert!(g.hand(Seat::new(0)).contains(c("AS")) && g.hand(Seat::new(1)).contains(c("AH")));
    assert_eq!(
        g.deck()[0],
        c("AC"),
        "the dealer's first named card is dealt first"
    );
    assert_eq!(g.phase(), Phase::Dealing);
    // The 49th step closes the deal: the dealer takes the bottom.
    let bottom = g.bottom();
    ok(&mut g, &H, Action::Deal);
    assert_eq!(g.phase(), Phase::Exchange);
    assert_eq!(g.hand(Seat::new(2)).len(), 18);
    assert!(bottom.is_subset(g.hand(Seat::new(2))));
    rejected(
        &mut g,
        Action::Deal,
        GameError::WrongPhase {
            action: "deal",
            phase: Phase::Exchange,
        },
    );
}

#[test]
fn deal_1_first_declarer_becomes_dealer_and_the_first_declaration_stands() {
    let seed = [9; 32];
    let first = seed_seat(seed);
    let a = Seat::new((first + 1) % 4); // gets 2♥ as its 2nd card
    let b = Seat::new((first + 2) % 4); // gets 2♣ as its 1st card
    let mut hands = ["", "", "", ""];
    hands[a.index()] = "3S 2H";
    hands[b.index()] = "2C BJ";
    let mut g = contested(seed, hands, "");
    assert_eq!(g.dealer(), None);
    // Before 2♥ reaches seat a, it cannot be shown.
    rejected(
        &mut g,
        declare(a, "2H"),
        GameError::CardNotHeld {
            seat: a,
            card: c("2H"),
        },
    );
    for _ in 0..3 {
        ok(&mut g, &H, Action::Deal);
    }
    // Seat b holds 2♣ after the third card; a joker cannot declare, nor a non-level card.
    rejected(
        &mut g,
        declare(a, "3S"),
        GameError::NotALevelCard {
            card: c("3S"),
            level: shengji_support::level(2),
        },
    );
    for _ in 0..5 {
        ok(&mut g, &H, Action::Deal);
    }
    rejected(
        &mut g,
        declare(b, "BJ"),
        GameError::NotALevelCard {
            card: c("BJ"),
            level: shengji_support::level(2),
        },
    );
    // Seat a declares first (it now holds 2♥): it becomes the dealer, hearts are trump.
    let ev = ok(&mut g, &H, declare(a, "2H"));
    assert_eq!(
        ev,
        vec![Event::Declared {
            seat: a,
            card: c("2H"),
            trump: Suit::Hearts,
            becomes_dealer: true
        }]
    );
    assert_eq!((g.dealer(), g.trump()), (Some(a), Some(Suit::Hearts)));
    // No override: seat b's 2♣ comes too late.
    rejected(
        &mut g,
        declare(b, "2C"),
        GameError::AlreadyDeclared {
            seat: a,
            card: c("2H"),
        },
    );
    for _ in 8..48 {
        ok(&mut g, &H, Action::Deal);
    }
    let ev = ok(&mut g, &H, Action::Deal);
    // Declared: the bottom is not turned; the declarer took it.
    assert!(ev.iter().all(|e| !matches!(e, Event::BottomTurned { .. })));
    assert!(g.turned().is_empty());
    assert_eq!(g.turn(), Some(a));
    assert_eq!(g.hand(a).len(), 18);
}

#[test]
fn a_declaration_after_the_last_card_still_counts_and_the_declaring_window_then_closes() {
    // Not contested (dealer 1): the declaration fixes trump only.
    let mut g = started(1, [2, 5], ["", "", "", "5D"], "");
    let ev = deal_all(&mut g, &H, Some("5D"));
    assert!(ev.contains(&Event::Declared {
        seat: Seat::new(3),
        card: c("5D"),
        trump: Suit::Diamonds,
        becomes_dealer: false
    }));
    assert_eq!(
        (g.dealer(), g.trump(), g.level().face()),
        (Some(Seat::new(1)), Some(Suit::Diamonds), 5)
    );
    rejected(
        &mut g,
        declare(Seat::new(3), "5D"),
        GameError::WrongPhase {
            action: "declare",
            phase: Phase::Exchange,
        },
    );
}

#[test]
fn the_level_played_is_the_dealer_sides() {
    let mut g = started(1, [5, 7], ["5S", "7S", "", ""], "");
    for _ in 0..48 {
        ok(&mut g, &H, Action::Deal);
    }
    rejected(
        &mut g,
        declare(Seat::new(0), "5S"),
        GameError::NotALevelCard {
            card: c("5S"),
            level: shengji_support::level(7),
        },
    );
    ok(&mut g, &H, declare(Seat::new(1), "7S"));
}

#[test]
fn no_declaration_with_a_level_card_in_the_bottom() {
    let seed = [4; 32];
    let mut g = contested(seed, ["", "", "", ""], "KS AH 2D 2C 3S 4S");
    let ev = deal_all(&mut g, &H, None);
    // The first level card turned (2♦) fixes diamonds, not the higher A♥ before it.
    let turned = shengji_support::cs("KS AH 2D 2C 3S 4S");
    assert!(ev.contains(&Event::BottomTurned {
        cards: turned.clone(),
        trump: Suit::Diamonds
    }));
    assert_eq!(g.trump(), Some(Suit::Diamonds));
    // Nobody declared in deal 1: the seed's seat deals.
    assert_eq!(g.dealer(), Some(Seat::new(seed_seat(seed))));
    // The turned cards are public: a spectator's view shows them in order.
    let v = g.view(shuangkou::shengji::Viewer::Spectator);
    assert_eq!(v.turned, turned);
}

#[test]
fn no_declaration_without_a_level_card_takes_the_highest_cards_suit() {
    // Jokers skipped; A high; equal highest: the first turned (A♣ before A♦).
    let mut g = started(0, [9, 9], ["", "", "", ""], "BJ KH AC 3S AD SJ");
    deal_all(&mut g, &H, None);
    assert_eq!(g.trump(), Some(Suit::Clubs));
    assert_eq!(g.turned(), &shengji_support::cs("BJ KH AC 3S AD SJ")[..]);
}

#[test]
fn burying_exactly_six_held_cards() {
    let mut g = started(0, [2, 2], ["", "", "", ""], "");
    deal_all(&mut g, &H, None);
    let hand = g.hand(Seat::new(0));
    let five: shuangkou::cards::CardSet = hand.iter().take(5).collect();
    let seven: shuangkou::cards::CardSet = hand.iter().take(7).collect();
    let six: shuangkou::cards::CardSet = hand.iter().take(6).collect();
    rejected(
        &mut g,
        Action::Bury {
            seat: Seat::new(0),
            cards: five,
        },
        GameError::BuryCount(5),
    );
    rejected(
        &mut g,
        Action::Bury {
            seat: Seat::new(0),
            cards: seven,
        },
        GameError::BuryCount(7),
    );
    let foreign: shuangkou::cards::CardSet =
        five.union(g.hand(Seat::new(1)).iter().take(1).collect());
    rejected(
        &mut g,
        Action::Bury {
            seat: Seat::new(0),
            cards: foreign,
        },
        GameError::BuryNotHeld,
    );
    rejected(
        &mut g,
        Action::Bury {
            seat: Seat::new(1),
            cards: six,
        },
        GameError::NotTheDealer {
            seat: Seat::new(1),
            dealer: Seat::new(0),
        },
    );
    rejected(
        &mut g,
        Action::Play {
            seat: Seat::new(0),
            card: hand.iter().next().unwrap(),
        },
        GameError::WrongPhase {
            action: "play",
            phase: Phase::Exchange,
        },
    );
    ok(
        &mut g,
        &H,
        Action::Bury {
            seat: Seat::new(0),
            cards: six,
        },
    );
    assert_eq!(g.bottom(), six);
    assert_eq!(g.hand(Seat::new(0)).len(), 12);
    assert_eq!((g.phase(), g.turn()), (Phase::Playing, Some(Seat::new(0))));
}

#[test]
fn burying_points_is_an_option() {
    let strict = StandardHooks {
        bury_points: false,
        ..H
    };
    let mut g = started(0, [2, 2], ["5S TS KS 3C 4C 6C 7C 8C 9C", "", "", ""], "");
    deal_all(&mut g, &strict, None);
    let with_points = set("5S TS 3C 4C 6C 7C");
    let before = g.clone();
    assert_eq!(
        g.apply(
            &strict,
            Action::Bury {
                seat: Seat::new(0),
                cards: with_points
            }
        ),
        Err(GameError::PointsBuried(15))
    );
    assert_eq!(g, before);
    ok(
        &mut g.clone(),
        &H,
        Action::Bury {
            seat: Seat::new(0),
            cards: with_points,
        },
    );
    ok(
        &mut g,
        &strict,
        Action::Bury {
            seat: Seat::new(0),
            cards: set("3C 4C 6C 7C 8C 9C"),
        },
    );
}

#[test]
fn following_suit_in_play_and_a_trump_of_the_led_print() {
    // Level 2, dealer 0 declares 2♥ (trump ♥). Seat 1 holds 2♠ (a trump) and one real spade.
    let mut g = started(
        0,
        [2, 2],
        [
            "2H 9S 8S 7S 6S",
            "2S QS 3H 4H 5H",
            "2C 3D 4D 6D 7D",
            "2D AS KS 3C 4C",
        ],
        "",
    );
    deal_all(&mut g, &H, Some("2H"));
    bury_all_but(&mut g, "2H 9S 8S 7S 6S");
    ok(
        &mut g,
        &H,
        Action::Play {
            seat: Seat::new(0),
            card: c("9S"),
        },
    );
    // Seat 1 holds Q♠: 2♠ does not follow spades, and neither does a heart.
    let e = g
        .apply(
            &H,
            Action::Play {
                seat: Seat::new(1),
                card: c("2S"),
            },
        )
        .unwrap_err();
    assert!(
        matches!(e, GameError::MustFollow { seat, led: EffSuit::Side(Suit::Spades), legal } if seat == Seat::new(1) && legal.contains(c("QS")) && !legal.contains(c("2S"))),
        "{e}"
    );
    assert_eq!(
        g.legal_cards(Seat::new(1)),
        g.hand(Seat::new(1))
            .intersection(set("QS AS KS JS TS 5S 4S 3S"))
    );
    ok(
        &mut g,
        &H,
        Action::Play {
            seat: Seat::new(1),
            card: c("QS"),
        },
    );
    // Seat 2 holds 2♣ (trump) and, by the layout, maybe spades: if void in spades, 2♣ may be
    // played (trumping in).
    let legal2 = g.legal_cards(Seat::new(2));
    let spades2 = g
        .hand(Seat::new(2))
        .intersection(set("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S"));
    assert_eq!(
        legal2,
        if spades2.is_empty() {
            g.hand(Seat::new(2))
        } else {
            spades2
        }
    );
    rejected(
        &mut g,
        Action::Play {
            seat: Seat::new(3),
            card: c("AS"),
        },
        GameError::NotYourTurn {
            seat: Seat::new(3),
            turn: Seat::new(2),
        },
    );
    let card2 = if spades2.is_empty() {
        c("2C")
    } else {
        spades2.iter().next().unwrap()
    };
    ok(
        &mut g,
        &H,
        Action::Play {
            seat: Seat::new(2),
            card: card2,
        },
    );
    ok(
        &mut g,
        &H,
        Action::Play {
            seat: Seat::new(3),
            card: c("AS"),
        },
    );
    let won = g.won();
    // 2♣ (a 副級牌, trump) wins if played; otherwise A♠.
    let winner_team = if card2 == c("2C") { 0 } else { 1 };
    assert_eq!(won[winner_team].len(), 4, "{won:?}");
    assert_eq!(
        g.turn(),
        Some(Seat::new(if card2 == c("2C") { 2 } else { 3 }))
    );
}

#[test]
fn equal_level_cards_in_one_trick_the_first_played_wins() {
    // Level 2, trump ♥ (declared 2♥ by seat 0). Seat 0 leads 2♠; seats 1, 2 and 3 follow with
    // 2♣, 2♦ and a low heart: all trumps; the 副級牌 tie, so seat 0's 2♠ wins.
    let mut g = started(0, [2, 2], ["2S 2H", "2C", "2D", "3H"], "");
    deal_all(&mut g, &H, Some("2H"));
    bury_all_but(&mut g, "2S 2H");
    for (seat, card) in [(0, "2S"), (1, "2C"), (2, "2D"), (3, "3H")] {
        ok(
            &mut g,
            &H,
            Action::Play {
                seat: Seat::new(seat),
                card: c(card),
            },
        );
    }
    assert_eq!(g.turn(), Some(Seat::new(0)));
    assert_eq!(g.won()[0], set("2S 2C 2D 3H"));
    // The next trick: seat 0 leads 2♥ (主級牌) — it beats the 副級牌 whatever comes later.
    assert!(g.legal_cards(Seat::new(0)).contains(c("2H")));
}

#[test]
fn bad_ids_and_seats_are_typed_errors() {
    let mut g = started(0, [2, 2], ["", "", "", ""], "");
    rejected(
        &mut g,
        declare(Seat::new(4), "2S"),
        GameError::NoSuchSeat(Seat::new(4)),
    );
    let far = shuangkou::cards::Card::new(60).unwrap();
    deal_all(&mut g, &H, None);
    let six: shuangkou::cards::CardSet = g.hand(Seat::new(0)).iter().take(6).collect();
    ok(
        &mut g,
        &H,
        Action::Bury {
            seat: Seat::new(0),
            cards: six,
        },
    );
    rejected(
        &mut g,
        Action::Play {
            seat: Seat::new(0),
            card: far,
        },
        GameError::NotInDeck(60),
    );
    let bad = shuangkou::shengji::Setup {
        seed: [0; 32],
        deck: Some(vec![c("AS"); 54]),
        start: None,
    };
    assert!(matches!(
        Game::new(bad),
        Err(GameError::Engine(EngineError::Setup(_)))
    ));
}
