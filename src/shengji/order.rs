//! The one-deck card order of 升級 under a level and a trump suit (docs/rules/SHENGJI.md A1): levels, trumps
//! (主牌), effective suits, strength within a trick, points, and the follow rule's legal cards.
//!
//! Cards are Shuangkou's first deck (`crate::cards`, ids 0..=53: `suit = id / 13`, `rank = id %
//! 13` with 0 → 3 … 12 → 2; 52 = SJ, 53 = BJ); the strength order here is 升級's own (2 low, A
//! high, level cards and jokers on top of the trumps), not the climbing order of `cards::Rank`.
//! Pure: depends only on `crate::cards` and `serde`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cards::{Card, CardSet, Rank, Suit};

/// The 54 cards of one deck (ids 0..=53).
pub const ONE_DECK: CardSet = CardSet::from_bits((1u128 << 54) - 1);
/// Cards dealt to each seat.
pub const HAND_SIZE: usize = 12;
/// The bottom cards (底牌).
pub const BOTTOM_SIZE: usize = 6;
/// Seats at the table.
pub const SEATS: u8 = 4;
/// Points in the deck (5s, tens and kings).
pub const DECK_POINTS: u32 = 100;

const SUITS: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Clubs, Suit::Diamonds];

/// A team's level (等級): 2 … 10, J, Q, K, A, stored as the face number 2..=14 (A = 14).
/// Serialized as the face number; deserializing anything outside 2..=14 is an error.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Level(u8);

impl TryFrom<u8> for Level {
    type Error = String;
    fn try_from(face: u8) -> Result<Level, String> {
        Level::new(face).ok_or_else(|| format!("level {face} is outside 2..=14"))
    }
}

impl From<Level> for u8 {
    fn from(level: Level) -> u8 {
        level.0
    }
}

impl Level {
    /// Where every team starts (「兩方均從最低等級2開始打」).
    pub const TWO: Level = Level(2);
    /// The top level; the match is won by reaching it.
    pub const ACE: Level = Level(14);

    /// The level with face number 2..=14, if any.
    pub const fn new(face: u8) -> Option<Level> {
        if face >= 2 && face <= 14 {
            Some(Level(face))
        } else {
            None
        }
    }

    /// The face number, 2..=14.
    pub const fn face(self) -> u8 {
        self.0
    }

    /// The rank whose cards are the level cards (級牌).
    pub const fn rank(self) -> Rank {
        // Rank indices: 0 → 3 … 11 → A, 12 → 2.
        match Rank::from_index(if self.0 == 2 { 12 } else { self.0 - 3 }) {
            Some(r) => r,
            None => Rank::TWO,
        }
    }

    /// This level raised by `steps`, capped at A (「先達到A級」: levels do not pass A).
    pub fn raised(self, steps: u8) -> Level {
        Level(self.0.saturating_add(steps).min(Level::ACE.0))
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            10 => f.write_str("10"),
            _ => f.write_str(self.rank().symbol()),
        }
    }
}

impl fmt::Debug for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The suit a card counts as in a trick: every trump counts as "trump", whatever its print.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffSuit {
    Trump,
    Side(Suit),
}

/// The face value in 升級 order within a suit: 2 → 0 … A → 12.
pub const fn face_value(rank: Rank) -> u8 {
    ((rank.index() + 1) % 13) as u8
}

/// The points of a card: 5 = 5, ten = 10, king = 10, others 0.
pub const fn points(card: Card) -> u32 {
    match card.rank() {
        Rank::FIVE => 5,
        Rank::TEN | Rank::KING => 10,
        _ => 0,
    }
}

/// The points of a set of cards.
pub fn points_of(cards: CardSet) -> u32 {
    cards.iter().map(points).sum()
}

/// The cards of one printed suit (13, level card included).
pub const fn suit_cards(suit: Suit) -> CardSet {
    CardSet::from_bits(0x1FFFu128 << (suit.index() as u32 * 13))
}

/// The four level cards of a level.
pub fn level_cards(level: Level) -> CardSet {
    SUITS
        .iter()
        .map(|&s| Card::from_parts(0, s, level.rank()))
        .collect()
}

/// The two jokers.
pub const JOKERS: CardSet = CardSet::from_bits(0b11u128 << 52);

/// The card order of a deal: its level and trump suit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Order {
    pub level: Level,
    pub trump: Suit,
}

impl Order {
    /// The 18 trumps: jokers, the four level cards and the trump suit.
    pub fn trumps(self) -> CardSet {
        JOKERS
            .union(level_cards(self.level))
            .union(suit_cards(self.trump))
    }

    pub fn is_trump(self, card: Card) -> bool {
        card.suit().is_none_or(|s| s == self.trump) || card.rank() == self.level.rank()
    }

    /// The suit `card` counts as.
    pub fn effective_suit(self, card: Card) -> EffSuit {
        match card.suit() {
            Some(s) if !self.is_trump(card) => EffSuit::Side(s),
            _ => EffSuit::Trump,
        }
    }

    /// Every card of an effective suit (18 trumps, or a side suit's 12 cards without the level
    /// card).
    pub fn cards_of(self, suit: EffSuit) -> CardSet {
        match suit {
            EffSuit::Trump => self.trumps(),
            EffSuit::Side(s) => suit_cards(s).difference(self.trumps()),
        }
    }

    /// Strength within the card's effective suit, higher wins: side cards and trump-suit cards
    /// 0 (2) … 12 (A), the three other level cards (副級牌) 13 each, the level card of the trump
    /// suit (主級牌) 14, SJ 15, BJ 16.
    pub fn strength(self, card: Card) -> u8 {
        match card.rank() {
            Rank::BIG_JOKER => 16,
            Rank::SMALL_JOKER => 15,
            r if r == self.level.rank() => {
                if card.suit() == Some(self.trump) {
                    14
                } else {
                    13
                }
            }
            r => face_value(r),
        }
    }

    /// True when `challenger`, played after `best` in a trick led in `led`, takes the trick from
    /// it: a trump beats a non-trump, a card of the led suit beats one off suit, and within the
    /// same effective suit only a strictly stronger card wins (equal cards: the first played).
    pub fn beats(self, challenger: Card, best: Card, led: EffSuit) -> bool {
        let rank_of = |c: Card| match self.effective_suit(c) {
            EffSuit::Trump => 2,
            s if s == led => 1,
            _ => 0,
        };
        let (a, b) = (rank_of(challenger), rank_of(best));
        a > b || (a == b && a > 0 && self.strength(challenger) > self.strength(best))
    }

    /// The index of the winning card of a trick (cards in play order), `None` for no cards.
    pub fn trick_winner(self, cards: &[Card]) -> Option<usize> {
        let led = self.effective_suit(*cards.first()?);
        let mut best = 0;
        let mut best_card = *cards.first()?;
        for (i, &c) in cards.iter().enumerate().skip(1) {
            if self.beats(c, best_card, led) {
                best = i;
                best_card = c;
            }
        }
        Some(best)
    }

    /// The cards of `hand` that may be played to a trick led by `lead` (`None`: the seat leads):
    /// the cards of the led effective suit if it holds any, otherwise any card (「如果有頭家出牌的
    /// 花色，那麼必須出，否則可以随便出一張」).
    pub fn legal_cards(self, hand: CardSet, lead: Option<Card>) -> CardSet {
        let Some(lead) = lead else { return hand };
        let follow = hand.intersection(self.cards_of(self.effective_suit(lead)));
        if follow.is_empty() { hand } else { follow }
    }
}

/// The trump suit fixed by the bottom cards when no one declared (「如果底牌中有等級牌，那麼該等級牌
/// 的花色為主花色，否則以最大的那張牌的花色為主花色（王除外）」): the first level card turned fixes it;
/// otherwise the suit of the highest card (jokers skipped, A high; equal highest cards: the first
/// turned). `None` only when every turned card is a joker (impossible with 6 bottom cards).
pub fn bottom_trump(turned: &[Card], level: Level) -> Option<Suit> {
    if let Some(s) = turned
        .iter()
        .find(|c| c.rank() == level.rank())
        .and_then(|c| c.suit())
    {
        return Some(s);
    }
    let mut best: Option<Card> = None;
    for &c in turned {
        if c.suit().is_none() {
            continue;
        }
        if best.is_none_or(|b| face_value(c.rank()) > face_value(b.rank())) {
            best = Some(c);
        }
    }
    best.and_then(|c| c.suit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_ranks_and_caps() {
        assert_eq!(Level::TWO.rank(), Rank::TWO);
        assert_eq!(Level::new(3).unwrap().rank(), Rank::THREE);
        assert_eq!(Level::new(10).unwrap().rank(), Rank::TEN);
        assert_eq!(Level::ACE.rank(), Rank::ACE);
        assert_eq!(Level::new(13).unwrap().raised(3), Level::ACE);
        assert_eq!(Level::new(1), None);
        assert_eq!(Level::new(15), None);
        assert_eq!(Level::new(11).unwrap().to_string(), "J");
        assert_eq!(serde_json::to_string(&Level::ACE).unwrap(), "14");
        assert_eq!(
            serde_json::from_str::<Level>("9").unwrap(),
            Level::new(9).unwrap()
        );
        assert!(serde_json::from_str::<Level>("15").is_err());
        assert!(serde_json::from_str::<Level>("1").is_err());
    }

    #[test]
    fn deck_constants() {
        assert_eq!(ONE_DECK.len(), 54);
        assert_eq!(points_of(ONE_DECK), DECK_POINTS);
        assert_eq!(suit_cards(Suit::Diamonds).len(), 13);
        assert!(JOKERS.iter().all(|c| c.suit().is_none()));
    }
}
