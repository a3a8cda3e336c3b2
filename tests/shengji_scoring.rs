//! docs/rules/SHENGJI.md A2.7–A2.10 by hand: 摳底 with and without, every upgrade band at its boundaries,
//! the next dealer both ways, and the match end at A (reach A, and the defend_a option).
//!
//! The engine cases are sweeps: one team holds every trump, split so that one of its seats holds
//! only trumps; that seat's card is in every trick, so the team wins all 12 tricks whatever is
//! played, and P is known in advance: 0 when the 莊家 side sweeps, 100 − buried + buried × the
//! multiplier when the 閑家 do.

pub mod shengji_support;

use shengji_support::{c, deal_all, level, ok, play_out, set, started};
use shuangkou::cards::{Card, Suit};
use shuangkou::seat::Seat;
use shuangkou::shengji::hooks::{NextDealerFacts, standard_next_dealer, standard_upgrade};
use shuangkou::shengji::{
    Action, DealResult, Event, Finish, Game, Order, Phase, Side, StandardHooks, Upgrade,
};

const BOTTOM: &str = "5S 5C 5D 3S 4S 6S"; // 15 points, side cards at every level used here

fn up(side: Side, levels: u8) -> Upgrade {
    Upgrade { side, levels }
}

#[test]
fn upgrade_bands_at_their_boundaries() {
    use Side::{Dealer, Opponents};
    let cases = [
        (0, up(Dealer, 3)),
        (5, up(Dealer, 1)),
        (35, up(Dealer, 1)),
        (40, up(Opponents, 1)),
        (55, up(Opponents, 1)),
        (60, up(Opponents, 2)),
        (75, up(Opponents, 2)),
        (80, up(Opponents, 3)),
        (95, up(Opponents, 3)),
        (100, up(Opponents, 4)),
        (115, up(Opponents, 4)),
        (120, up(Opponents, 5)),
        (200, up(Opponents, 9)),
        (300, up(Opponents, 12)),
        (u32::MAX, up(Opponents, 12)),
    ];
    for (p, want) in cases {
        assert_eq!(standard_upgrade(p), want, "P = {p}");
    }
}

#[test]
fn the_rotation_both_ways() {
    for dealer in 0..4 {
        let seat = Seat::new(dealer);
        let kept = standard_next_dealer(&NextDealerFacts {
            dealer: seat,
            dealer_kept: true,
        });
        let lost = standard_next_dealer(&NextDealerFacts {
            dealer: seat,
            dealer_kept: false,
        });
        assert_eq!(kept, Seat::new((dealer + 2) % 4), "partner of {dealer}");
        assert_eq!(lost, Seat::new((dealer + 1) % 4), "seat after {dealer}");
        assert_eq!(kept.team(), seat.team());
        assert_ne!(lost.team(), seat.team());
    }
}

/// A deal in which `strong`'s team holds every trump (trump ♥) and `strong` holds only trumps.
fn sweep(dealer: u8, levels: [u8; 2], strong: u8, hooks: &StandardHooks) -> (Game, Vec<Event>) {
    let lvl = level(levels[usize::from(dealer % 2)]);
    let order = Order {
        level: lvl,
        trump: Suit::Hearts,
    };
    let mut trumps: Vec<Card> = order.trumps().iter().collect();
    trumps.sort_by_key(|&c| std::cmp::Reverse(order.strength(c)));
    let names = |cards: &[Card]| {
        cards
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let top = names(&trumps[..12]);
    let rest = names(&trumps[12..]);
    let mut hands = ["", "", "", ""];
    hands[strong as usize] = &top;
    hands[(strong as usize + 2) % 4] = &rest;
    let mut g = started(dealer, levels, hands, BOTTOM);
    let declare = trumps[2].to_string(); // the 主級牌 (level card of hearts)
    deal_all(&mut g, hooks, Some(&declare));
    assert_eq!(g.trump(), Some(Suit::Hearts));
    ok(
        &mut g,
        hooks,
        Action::Bury {
            seat: Seat::new(dealer),
            cards: set(BOTTOM),
        },
    );
    let events = play_out(&mut g, hooks);
    (g, events)
}

fn result(events: &[Event]) -> DealResult {
    events
        .iter()
        .find_map(|e| match e {
            Event::DealEnded(r) => Some(r.clone()),
            _ => None,
        })
        .expect("the deal ended")
}

/// [`sweep`] and the result of the deal it ends.
fn swept(dealer: u8, levels: [u8; 2], strong: u8, hooks: &StandardHooks) -> (Game, DealResult) {
    let (g, events) = sweep(dealer, levels, strong, hooks);
    (g, result(&events))
}

#[test]
fn kou_di_when_the_opponents_win_the_last_trick() {
    let hooks = StandardHooks::default();
    let (g, r) = swept(0, [2, 2], 1, &hooks);
    assert_eq!(r.last_trick_winner.team(), 1);
    assert_eq!((r.buried_points, r.multiplier, r.bottom_bonus), (15, 2, 30));
    assert_eq!(r.trick_points, [0, 85]);
    // P = 85 + 15 × 2 = 115 (past 100): 閑家 +4, and they deal next (the seat after D).
    assert_eq!(r.opponents_points, 115);
    assert_eq!(r.upgrade, up(Side::Opponents, 4));
    assert_eq!(r.levels_after, [level(2), level(6)]);
    assert_eq!(r.next_dealer, Some(Seat::new(1)));
    assert_eq!(
        (g.deal_number(), g.dealer(), g.level()),
        (2, Some(Seat::new(1)), level(6))
    );
    assert_eq!(g.phase(), Phase::Dealing);
}

#[test]
fn the_kou_di_multiplier_is_a_setting() {
    let hooks = StandardHooks {
        multiplier: 3,
        ..StandardHooks::default()
    };
    let r = swept(2, [2, 2], 3, &hooks).1;
    // P = 85 + 15 × 3 = 130: +5; the seat after dealer 2 is 3.
    assert_eq!((r.multiplier, r.opponents_points), (3, 130));
    assert_eq!(r.upgrade, up(Side::Opponents, 5));
    assert_eq!(r.next_dealer, Some(Seat::new(3)));
}

#[test]
fn no_kou_di_when_the_dealer_side_wins_the_last_trick() {
    let hooks = StandardHooks::default();
    let (g, r) = swept(1, [2, 7], 1, &hooks);
    assert_eq!(r.last_trick_winner.team(), 1);
    // The buried 15 points stay out: P = 0, 莊家 +3, the dealer's partner deals next.
    assert_eq!(
        (r.multiplier, r.bottom_bonus, r.opponents_points),
        (0, 0, 0)
    );
    assert_eq!(r.trick_points, [0, 85]);
    assert_eq!(r.upgrade, up(Side::Dealer, 3));
    assert_eq!(r.levels_after, [level(2), level(10)]);
    assert_eq!(r.next_dealer, Some(Seat::new(3)));
    assert_eq!((g.dealer(), g.level()), (Some(Seat::new(3)), level(10)));
}

#[test]
fn reaching_a_ends_the_match() {
    let hooks = StandardHooks::default();
    // From 10, +3 is K: the match goes on, the partner deals at K.
    let (g, r) = swept(0, [10, 2], 0, &hooks);
    assert_eq!(r.levels_after, [level(13), level(2)]);
    assert_eq!(
        (g.winner(), g.dealer(), g.level()),
        (None, Some(Seat::new(2)), level(13))
    );
    // From J, +3 reaches A exactly: team 0 wins.
    let (mut g, events) = sweep(0, [11, 2], 0, &hooks);
    let r = result(&events);
    assert_eq!(
        (r.levels_after, r.winner, r.next_dealer),
        ([level(14), level(2)], Some(0), None)
    );
    assert!(events.contains(&Event::MatchEnded { winner: 0 }));
    assert_eq!((g.phase(), g.winner()), (Phase::Finished, Some(0)));
    // From Q, +3 is capped at A.
    assert_eq!(swept(0, [12, 2], 0, &hooks).1.levels_after[0], level(14));
    // Nothing is accepted after the end.
    let before = g.clone();
    assert_eq!(
        g.apply(&hooks, Action::Deal),
        Err(shuangkou::shengji::GameError::Engine(
            shuangkou::game::EngineError::GameOver
        ))
    );
    assert_eq!(g, before);
    // The 閑家 reach A too: from Q, +4 (P = 115) → A.
    let r = swept(0, [2, 12], 1, &hooks).1;
    assert_eq!((r.levels_after[1], r.winner), (level(14), Some(1)));
}

#[test]
fn defend_a_makes_a_team_at_a_win_a_deal_as_dealer_at_a() {
    let hooks = StandardHooks {
        finish: Finish::DefendA,
        ..StandardHooks::default()
    };
    // Reaching A is not enough.
    let (g, r) = swept(0, [11, 2], 0, &hooks);
    assert_eq!((r.levels_after[0], r.winner), (level(14), None));
    assert_eq!(
        (g.phase(), g.dealer(), g.level()),
        (Phase::Dealing, Some(Seat::new(2)), level(14))
    );
    // Taking over at A as 閑家 is not enough either.
    let r = swept(1, [14, 2], 0, &hooks).1;
    assert_eq!(
        (r.upgrade.side, r.winner, r.next_dealer),
        (Side::Opponents, None, Some(Seat::new(2)))
    );
    // Keeping the deal as 莊家 at A wins (the level cards are the aces here).
    let (g, r) = swept(0, [14, 2], 2, &hooks);
    assert_eq!(
        (r.level, r.upgrade.side, r.winner),
        (level(14), Side::Dealer, Some(0))
    );
    assert_eq!(g.winner(), Some(0));
}

/// Who wins the last trick (摳底), by hand (docs/rules/SHENGJI.md A2.7: the bottom goes to the
/// 閑家 only when they win the last trick): the 閑家 (team 1) win tricks 1–11 and seat 1 leads
/// the last one, but the dealer's side wins it. Trump ♥ at level 2; seat 1 holds the eleven top
/// trumps and 3S, seat 3 the other seven trumps and five clubs, seat 2 every other spade and 8C,
/// dealer 0 only clubs and diamonds. Seat 1 plays its strongest legal card (a trump while it has
/// one), the others their first legal card that is not a spade where they can. So seat 1 wins
/// every trick with a trump (nobody holds a stronger one) and, with its trumps gone, leads 3S at
/// the 12th; by then seat 3's trumps are gone (ten trump leads, seven trumps), seat 0 holds no
/// spade and no trump, and seat 2 holds one spade above 3S: seat 2 wins, no 摳底.
#[test]
fn the_last_trick_led_by_the_opponents_and_won_by_the_dealers_side_gives_no_kou_di() {
    let hooks = StandardHooks::default();
    let hands = [
        "9C TC JC QC KC AC 3D 4D 5D 6D 7D 8D",
        "BJ SJ 2H 2S 2C 2D AH KH QH JH TH 3S",
        "4S 5S 6S 7S 8S 9S TS JS QS KS AS 8C",
        "9H 8H 7H 6H 5H 4H 3H 3C 4C 5C 6C 7C",
    ];
    let bottom = "9D TD JD QD KD AD";
    let mut g = started(0, [2, 2], hands, bottom);
    deal_all(&mut g, &hooks, Some("2H"));
    assert_eq!(g.trump(), Some(Suit::Hearts));
    ok(
        &mut g,
        &hooks,
        Action::Bury {
            seat: Seat::new(0),
            cards: set(bottom),
        },
    );
    let order = Order {
        level: level(2),
        trump: Suit::Hearts,
    };
    let spade = |c: &Card| !order.is_trump(*c) && c.suit() == Some(Suit::Spades);
    let mut events = Vec::new();
    let mut plays = 0;
    while g.deal_number() == 1 {
        let seat = g.turn().expect("a seat to play");
        let legal: Vec<Card> = g.legal_cards(seat).iter().collect();
        let card = if seat == Seat::new(1) {
            *legal.iter().max_by_key(|&&c| order.strength(c)).unwrap()
        } else {
            *legal.iter().find(|c| !spade(c)).unwrap_or(&legal[0])
        };
        // The last trick: who leads it and what is led (the construction, checked).
        if plays == 44 {
            assert_eq!(
                (seat, card),
                (Seat::new(1), c("3S")),
                "seat 1 leads 3S last"
            );
        }
        events.extend(ok(&mut g, &hooks, Action::Play { seat, card }));
        plays += 1;
    }
    assert_eq!(plays, 48);
    let r = result(&events);
    assert_eq!(
        r.last_trick_winner,
        Seat::new(2),
        "the dealer's side wins the last trick"
    );
    assert_eq!((r.multiplier, r.bottom_bonus), (0, 0), "no 摳底");
    assert_eq!(r.opponents_points, r.trick_points[1]);
}
