//! docs/rules/SHENGJI.md A1 by hand: the card order under a level and a trump suit, effective suits,
//! points, trick winners (equal 副級牌: the first played) and the follow rule's legal cards.

pub mod shengji_support;

use shengji_support::{c, cs, level, set};
use shuangkou::cards::{Card, Suit};
use shuangkou::shengji::order::{ONE_DECK, bottom_trump, points, points_of};
use shuangkou::shengji::{EffSuit, Order};

fn order(face: u8, trump: Suit) -> Order {
    Order {
        level: level(face),
        trump,
    }
}

/// Asserts that in `suit` each card of `list` beats every card after it, and none of those
/// beats it.
fn each_beats_those_after(o: &Order, list: &[Card], suit: EffSuit) {
    for (i, &hi) in list.iter().enumerate() {
        for &lo in &list[i + 1..] {
            assert!(o.beats(hi, lo, suit), "{hi} beats {lo}");
            assert!(!o.beats(lo, hi, suit), "{lo} does not beat {hi}");
        }
    }
}

/// The seed's list 「大王,小王,主級牌,副級牌,A,K,Q,J,10，9,8,7,6,5,4,3,2」 for level 2, trump ♥,
/// written out card by card: each card beats every card after it, and the 副級牌 tie.
#[test]
fn trump_order_follows_the_seed_list() {
    let o = order(2, Suit::Hearts);
    let list = cs("BJ SJ 2H 2S AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H");
    each_beats_those_after(&o, &list, EffSuit::Trump);
    // 副級牌 are equal to each other: none beats another.
    for a in cs("2S 2C 2D") {
        for b in cs("2S 2C 2D") {
            assert!(!o.beats(a, b, EffSuit::Trump), "{a} vs {b}");
        }
        assert!(o.beats(a, c("AH"), EffSuit::Trump));
        assert!(!o.beats(a, c("2H"), EffSuit::Trump));
    }
    assert_eq!(o.trumps().len(), 18);
    assert_eq!(
        o.trumps(),
        set("BJ SJ 2H 2S 2C 2D AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H")
    );
}

#[test]
fn side_suits_run_a_to_2_without_the_level() {
    let o = order(9, Suit::Spades);
    let list = cs("AD KD QD JD TD 8D 7D 6D 5D 4D 3D 2D");
    each_beats_those_after(&o, &list, EffSuit::Side(Suit::Diamonds));
    assert_eq!(
        o.cards_of(EffSuit::Side(Suit::Diamonds)),
        list.iter().copied().collect()
    );
    assert_eq!(o.effective_suit(c("9D")), EffSuit::Trump);
    assert_eq!(o.effective_suit(c("9S")), EffSuit::Trump);
    assert_eq!(o.effective_suit(c("SJ")), EffSuit::Trump);
    assert_eq!(o.effective_suit(c("2S")), EffSuit::Trump);
    assert_eq!(o.effective_suit(c("2D")), EffSuit::Side(Suit::Diamonds));
    // Every card is in exactly one effective suit.
    let parts = [
        o.trumps(),
        o.cards_of(EffSuit::Side(Suit::Hearts)),
        o.cards_of(EffSuit::Side(Suit::Clubs)),
        o.cards_of(EffSuit::Side(Suit::Diamonds)),
    ];
    assert_eq!(parts.iter().map(|p| p.len()).sum::<usize>(), 54);
    assert_eq!(
        parts.iter().fold(Default::default(), |a, p| p.union(a)),
        ONE_DECK
    );
    assert!(o.cards_of(EffSuit::Side(Suit::Spades)).is_empty());
}

#[test]
fn points_are_fives_tens_and_kings() {
    assert_eq!(points(c("5H")), 5);
    assert_eq!(points(c("TC")), 10);
    assert_eq!(points(c("KS")), 10);
    assert_eq!(points(c("QS")) + points(c("AS")) + points(c("BJ")), 0);
    assert_eq!(points_of(ONE_DECK), 100);
}

#[test]
fn trick_winners() {
    let o = order(2, Suit::Hearts);
    // Side suit led, nobody trumps: the highest of the led suit (off-suit cards never win).
    assert_eq!(o.trick_winner(&cs("9S AS AC KS")), Some(1));
    // A low trump beats every side card.
    assert_eq!(o.trick_winner(&cs("AS KS 3H QS")), Some(2));
    // A 副級牌 is a trump: it beats the ace of the led printed suit.
    assert_eq!(o.trick_winner(&cs("AS 2S KS QS")), Some(1));
    // Equal 副級牌 in one trick: the first played wins.
    assert_eq!(o.trick_winner(&cs("7S 2C 2D 2S")), Some(1));
    assert_eq!(o.trick_winner(&cs("2D 2C 2S AH")), Some(0));
    // The 主級牌 beats the 副級牌, the jokers beat it.
    assert_eq!(o.trick_winner(&cs("2C 2D 2H 2S")), Some(2));
    assert_eq!(o.trick_winner(&cs("2H SJ BJ AH")), Some(2));
    assert_eq!(o.trick_winner(&[]), None);
}

#[test]
fn a_trump_of_the_led_printed_suit_does_not_follow_it() {
    // Level 2, trump ♥: 2♠ is a trump, not a spade.
    let o = order(2, Suit::Hearts);
    let lead = Some(c("9S"));
    // Holding 2♠ and no other spade: void in spades, any card may be played.
    let hand = set("2S 3H 4C 5D");
    assert_eq!(o.legal_cards(hand, lead), hand);
    // Holding a real spade too: only it follows; 2♠ is not a spade.
    let hand = set("2S 7S 3H 4C");
    assert_eq!(o.legal_cards(hand, lead), set("7S"));
    // A trump led: every trump follows, whatever its print (jokers, level cards).
    let hand = set("2S SJ 7S 4C");
    assert_eq!(o.legal_cards(hand, Some(c("KH"))), set("2S SJ"));
    // Leading: anything.
    assert_eq!(o.legal_cards(hand, None), hand);
}

#[test]
fn the_bottom_rule() {
    let (l, a) = (level(2), level(14));
    for (bottom, at, trump) in [
        // The first level card turned fixes the trump suit.
        ("KS 2D 2C AH 3S 4S", l, Suit::Diamonds),
        // No level card: the suit of the highest card, A high.
        ("9S KC 3C AD 4H 5H", l, Suit::Diamonds),
        // Jokers skipped.
        ("BJ SJ 3S 4C 6D 3H", l, Suit::Diamonds),
        // Equal highest: the first turned.
        ("3S AH QC AD KS 4D", l, Suit::Hearts),
        // Under level A, aces are level cards (first turned wins); 2 is low, K the highest.
        ("KS AC AH 3D 4D 5D", a, Suit::Clubs),
        ("2S 3C KH QD 4D 5D", a, Suit::Hearts),
    ] {
        assert_eq!(bottom_trump(&cs(bottom), at), Some(trump), "{bottom}");
    }
}
