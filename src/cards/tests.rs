//! The card vocabulary's unit tests.

use serde::Deserialize;

use super::set::RANK_MASKS;
use super::{Card, CardError, CardSet, Rank, RankCounts, Suit};

/// A card set read from its ids (JSON text, a JSON value, inside a buffered enum) is what
/// `from_ids` makes of the list: the same set, or an error for a bad or repeated id
/// wherever it is, or for anything but a list of ids.
#[test]
fn card_sets_read_from_ids_as_from_ids_makes_them() {
    let lists = [
        "[]",
        "[0]",
        "[107,0,53]",
        "[5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23]",
        "[108]",
        "[3,3]",
        "[1,200,1]",
        "[1,2,2,300]",
        "[-1]",
        "[1.5]",
        "[\"3\"]",
        "3",
        "{}",
        "null",
        "[1,",
    ];
    for text in lists {
        let oracle = serde_json::from_str::<Vec<u32>>(text)
            .ok()
            .map(|ids| CardSet::from_ids(&ids));
        let read = serde_json::from_str::<CardSet>(text);
        match oracle {
            Some(Ok(set)) => assert_eq!(read.unwrap(), set, "{text}"),
            Some(Err(e)) => {
                let message = read.unwrap_err().to_string();
                assert!(message.starts_with(&e.to_string()), "{text}: {message}");
            }
            None => assert!(read.is_err(), "{text}"),
        }
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            let from_value = serde_json::from_value::<CardSet>(value);
            assert_eq!(from_value.ok(), read_ok(text), "{text} as a value");
        }
    }
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        Play { cards: CardSet },
    }
    let play: Tagged = serde_json::from_str(r#"{"kind":"Play","cards":[9,4]}"#).unwrap();
    let cards = CardSet::from_ids(&[4, 9]).unwrap();
    assert_eq!(play, Tagged::Play { cards });
    assert!(serde_json::from_str::<Tagged>(r#"{"kind":"Play","cards":[9,9]}"#).is_err());
}

fn read_ok(text: &str) -> Option<CardSet> {
    serde_json::from_str(text).ok()
}

#[test]
fn card_ids_match_the_api_encoding() {
    let c = Card::new(0).unwrap();
    assert_eq!(
        (c.rank(), c.suit(), c.deck()),
        (Rank::THREE, Some(Suit::Spades), 0)
    );
    let c = Card::new(12).unwrap();
    assert_eq!(c.rank(), Rank::TWO);
    let c = Card::new(13 + 11).unwrap();
    assert_eq!((c.rank(), c.suit()), (Rank::ACE, Some(Suit::Hearts)));
    assert_eq!(Card::new(52).unwrap().rank(), Rank::SMALL_JOKER);
    assert_eq!(Card::new(53).unwrap().rank(), Rank::BIG_JOKER);
    let c = Card::new(54 + 51).unwrap();
    assert_eq!(
        (c.rank(), c.suit(), c.deck()),
        (Rank::TWO, Some(Suit::Diamonds), 1)
    );
    assert_eq!(Card::new(107).unwrap().rank(), Rank::BIG_JOKER);
    assert_eq!(Card::new(108), Err(CardError::BadCardId(108)));
    for c in Card::all() {
        let back = Card::from_parts(c.deck(), c.suit().unwrap_or(Suit::Spades), c.rank());
        assert_eq!(back, c);
    }
}

#[test]
fn full_deck_counts() {
    assert_eq!(CardSet::FULL.len(), 108);
    assert_eq!(CardSet::FULL.rank_counts(), RankCounts::FULL);
    assert_eq!(RankCounts::FULL.total(), 108);
    for r in Rank::all() {
        assert_eq!(CardSet::FULL.of_rank(r).len() as u8, r.copies());
    }
}

#[test]
fn notation_round_trips_and_accepts_variants() {
    let rc: RankCounts = "3 10 t,T j sj BJ bj 2 a".parse().unwrap();
    assert_eq!(rc.to_string(), "3 T T T J A 2 SJ BJ BJ");
    assert_eq!(rc.to_string().parse::<RankCounts>().unwrap(), rc);
    assert_eq!(rc.total(), 10);
}

#[test]
fn notation_errors_name_the_token() {
    assert_eq!(
        "3 X 4".parse::<RankCounts>(),
        Err(CardError::UnknownToken("X".into()))
    );
    let e = "7 7 7 7 7 7 7 7 7".parse::<RankCounts>().unwrap_err();
    assert!(
        matches!(e, CardError::TooManyCopies { count: 9, .. }),
        "{e}"
    );
    let e = "sj SJ sj".parse::<RankCounts>().unwrap_err();
    assert!(
        matches!(
            e,
            CardError::TooManyCopies {
                count: 3,
                max: 2,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("sj"));
}

#[test]
fn take_picks_lowest_ids() {
    let hand = CardSet::FULL;
    let play: RankCounts = "3 3 BJ".parse().unwrap();
    let cards = hand.take(play).unwrap();
    assert_eq!(cards.ids(), vec![0, 13, 53]);
    assert_eq!(cards.rank_counts(), play);
    let small = CardSet::from_ids(&[0, 1]).unwrap();
    assert_eq!(small.take("3 3".parse().unwrap()), None);
}

#[test]
fn subset_and_arithmetic() {
    let a: RankCounts = "3 3 4".parse().unwrap();
    let b: RankCounts = "3 3 3 4 5".parse().unwrap();
    assert!(a.is_subset(b));
    assert!(!b.is_subset(a));
    assert_eq!(b.minus(a).unwrap().to_string(), "3 5");
    assert_eq!(a.minus(b), None);
    assert_eq!(a.plus(a).to_string(), "3 3 3 3 4 4");
    assert_eq!(
        RankCounts::from_bits(RankCounts::FULL.bits()),
        Some(RankCounts::FULL)
    );
    assert_eq!(RankCounts::from_bits(9), None);
}

#[test]
fn rank_counts_match_a_count_per_rank() {
    let mut bits = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834u128;
    for _ in 0..200 {
        bits = bits.rotate_left(7) ^ bits.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let set = CardSet::from_bits(bits);
        let mut slow = RankCounts::EMPTY;
        for (i, m) in RANK_MASKS.iter().enumerate() {
            slow = slow.with(Rank(i as u8), (set.0 & m).count_ones() as u8);
        }
        assert_eq!(set.rank_counts(), slow, "{set:?}");
    }
    assert_eq!(CardSet::EMPTY.rank_counts(), RankCounts::EMPTY);
}

#[test]
fn duplicate_ids_are_rejected() {
    assert_eq!(CardSet::from_ids(&[5, 5]), Err(CardError::DuplicateCard(5)));
    assert_eq!(CardSet::from_ids(&[200]), Err(CardError::BadCardId(200)));
}
