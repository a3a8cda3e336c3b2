//! The combination (牌型) of a play as a value: `HandType`, `Hand` (one interpretation of a play,
//! with what its wild jokers became), its named constructors, and the play errors.
//!
//! Which interpretations a multiset of cards has is `crate::classify`. Pure and allocation-free;
//! depends only on `cards` and `rules`.

use std::fmt;
use std::str::FromStr;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::cards::{Rank, RankCounts};
use crate::rules::Rules;

/// The combination types. The names are stable: other tools consume them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandType {
    /// 單張
    Single,
    /// 對子
    Pair,
    /// 三張
    Triple,
    /// 順子, five or more consecutive ranks 3..A
    Straight,
    /// 連對, three or more consecutive pairs
    PairChain,
    /// 連三張, three or more consecutive triples
    TripleChain,
    /// 炸彈 / X相炸彈, four or more cards of one rank
    Bomb,
    /// 三王炸彈, any three jokers
    ThreeJokers,
    /// 天王炸彈, all four jokers
    FourJokers,
    /// X相Y連環炸彈, three or more consecutive bombs
    ChainBomb,
}

impl HandType {
    /// All types, in the order used for sorting non-bombs.
    pub const ALL: [HandType; 10] = [
        HandType::Single,
        HandType::Pair,
        HandType::Triple,
        HandType::Straight,
        HandType::PairChain,
        HandType::TripleChain,
        HandType::Bomb,
        HandType::ThreeJokers,
        HandType::FourJokers,
        HandType::ChainBomb,
    ];

    /// The stable name (`single`, `pair`, …, `chain_bomb`).
    pub const fn name(self) -> &'static str {
        match self {
            HandType::Single => "single",
            HandType::Pair => "pair",
            HandType::Triple => "triple",
            HandType::Straight => "straight",
            HandType::PairChain => "pair_chain",
            HandType::TripleChain => "triple_chain",
            HandType::Bomb => "bomb",
            HandType::ThreeJokers => "three_jokers",
            HandType::FourJokers => "four_jokers",
            HandType::ChainBomb => "chain_bomb",
        }
    }

    /// True for the bomb types (which beat every non-bomb).
    pub const fn is_bomb(self) -> bool {
        matches!(
            self,
            HandType::Bomb | HandType::ThreeJokers | HandType::FourJokers | HandType::ChainBomb
        )
    }
}

impl fmt::Display for HandType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HandType {
    type Err = String;
    fn from_str(s: &str) -> Result<HandType, String> {
        HandType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown hand type {s:?}"))
    }
}

/// Which rank each wild joker of a play became, in order (small jokers first, then big).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct WildUse {
    n: u8,
    from: [u8; 4],
    to: [u8; 4],
}

impl WildUse {
    /// The (joker, rank it became) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (Rank, Rank)> + '_ {
        (0..self.n as usize).filter_map(|i| {
            Some((
                Rank::from_index(self.from[i])?,
                Rank::from_index(self.to[i])?,
            ))
        })
    }

    /// Number of wild jokers used as other ranks.
    pub const fn len(&self) -> usize {
        self.n as usize
    }

    pub const fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn push(&mut self, from: Rank, to: Rank) {
        let i = self.n as usize;
        if i < 4 {
            self.from[i] = from.index() as u8;
            self.to[i] = to.index() as u8;
            self.n += 1;
        }
    }
}

impl fmt::Debug for WildUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|(a, b)| format!("{a}={b}")))
            .finish()
    }
}

/// One interpretation of a play: its type, size, key and star level, and what the wilds became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Hand {
    /// The combination type.
    pub kind: HandType,
    /// Number of cards.
    pub len: u8,
    /// The comparison rank: the highest rank after substitution (for chain bombs the top group's
    /// rank, for cyclic chains the top in cyclic order). Meaningless for 三王 / 天王, see `key()`.
    pub key: Rank,
    /// Star level (星級 / 線 / 相) of a bomb under a star system; `None` otherwise.
    pub stars: Option<u8>,
    /// Cards per group: 1 straight, 2 pair chain, 3 triple chain, X for bombs (the smallest group
    /// of a chain bomb).
    pub group: u8,
    /// Number of consecutive ranks (straight length, pairs, triples, chain-bomb links; 1 for sets).
    pub links: u8,
    /// A chain bomb running through 2 (循環炸彈).
    pub cyclic: bool,
    /// The ranks the play stands for after substitution.
    pub substituted: RankCounts,
    /// Which wild joker became which rank.
    pub wilds: WildUse,
}

impl Hand {
    /// The key rank, `None` for 三王 and 天王.
    pub fn key(&self) -> Option<Rank> {
        match self.kind {
            HandType::ThreeJokers | HandType::FourJokers => None,
            _ => Some(self.key),
        }
    }

    /// True for bombs.
    pub const fn is_bomb(&self) -> bool {
        self.kind.is_bomb()
    }
}

/// The interpretations of one play (at most one per type), bombs first, strongest bomb first.
pub type Interpretations = ArrayVec<Hand, 6>;

/// A declared interpretation for a play that fits several types: the type and, optionally, the
/// key rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declared {
    pub kind: HandType,
    pub key: Option<Rank>,
}

/// Why a play cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    #[error("the cards {0} are not a combination")]
    NotACombination(RankCounts),
    #[error("the cards {cards} fit several combinations ({}); declare one", names(.options))]
    Ambiguous {
        cards: RankCounts,
        options: Vec<Hand>,
    },
    #[error("the declared interpretation does not fit the cards {0}")]
    DeclaredMismatch(RankCounts),
    #[error("the cards {0} do not beat the play on the table")]
    DoesNotBeat(RankCounts),
}

/// A play with more cards than a hand holds: no combination can have them (docs/rules/RULES.md §2 item 2:
/// a chain bomb of X links of Y cards needs X·Y ≤ the hand size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the play has {len} cards but a hand holds at most {hand_size} (hand_size): no combination is larger than a hand"
)]
pub struct LargerThanHand {
    pub len: u32,
    pub hand_size: u8,
}

/// Rejects a play with more cards than a hand of `rules` holds; `classify` gives such a play
/// no interpretation and `resolve` answers `NotACombination`.
pub fn check_size(cards: RankCounts, rules: &Rules) -> Result<(), LargerThanHand> {
    let len = cards.total();
    if len > u32::from(rules.hand_size) {
        return Err(LargerThanHand {
            len,
            hand_size: rules.hand_size,
        });
    }
    Ok(())
}

fn names(hands: &[Hand]) -> String {
    hands
        .iter()
        .map(|h| match h.key() {
            Some(k) => format!("{} {} key {}", h.kind, h.len, k),
            None => format!("{} {}", h.kind, h.len),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cards of an interpretation: the natural cards, the ranks the play stands for after
/// substitution (`target`), and the wild jokers (`small`, `big`) that fill `target - nat`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fill {
    nat: RankCounts,
    target: RankCounts,
    small: u8,
    big: u8,
}

impl Fill {
    /// Cards that stand for themselves (no wild joker).
    #[inline]
    pub(crate) const fn natural(cards: RankCounts) -> Fill {
        Fill {
            nat: cards,
            target: cards,
            small: 0,
            big: 0,
        }
    }

    /// `nat` with `small` and `big` wild jokers standing for `target - nat`.
    #[inline]
    pub(crate) const fn wild(nat: RankCounts, target: RankCounts, small: u8, big: u8) -> Fill {
        Fill {
            nat,
            target,
            small,
            big,
        }
    }
}

impl Hand {
    /// A play of one rank, or of jokers only: single, pair, triple, bomb, 三王, 天王 (one group of
    /// all its cards).
    #[inline]
    pub(crate) fn set(kind: HandType, key: Rank, stars: Option<u8>, fill: Fill) -> Hand {
        build(kind, key, stars, fill.target.total() as u8, 1, false, fill)
    }

    /// A straight, pair chain or triple chain: `links` consecutive ranks of `group` cards each.
    #[inline]
    pub(crate) fn sequence(kind: HandType, key: Rank, group: u8, links: u8, fill: Fill) -> Hand {
        build(kind, key, None, group, links, false, fill)
    }

    /// A chain bomb (X相Y連環炸彈) of `links` groups, the smallest of `group` cards, at star level
    /// `stars`; `cyclic` when it runs through the 2 (循環炸彈).
    #[inline]
    pub(crate) fn chain_bomb(
        key: Rank,
        stars: u8,
        group: u8,
        links: u8,
        cyclic: bool,
        fill: Fill,
    ) -> Hand {
        build(
            HandType::ChainBomb,
            key,
            Some(stars),
            group,
            links,
            cyclic,
            fill,
        )
    }
}

/// Builds a hand whose ranks after substitution are `fill.target`; the wilds (small jokers
/// first, then big ones) fill `target - nat` in ascending rank order.
#[inline]
fn build(
    kind: HandType,
    key: Rank,
    stars: Option<u8>,
    group: u8,
    links: u8,
    cyclic: bool,
    fill: Fill,
) -> Hand {
    let Fill {
        nat,
        target,
        small: ws,
        big: wb,
    } = fill;
    let mut wilds = WildUse::default();
    if ws + wb > 0 {
        if let Some(fill) = target.minus(nat) {
            // The ranks to fill, weakest first, one wild each: small jokers, then big ones.
            let jokers = ws + wb;
            let mut used = 0u8;
            let mut rest = fill.bits();
            while rest != 0 && used < jokers {
                let shift = rest.trailing_zeros() & !3;
                let to = Rank::at((shift / 4) as usize);
                let count = ((rest >> shift) & 0xF) as u8;
                rest &= !(0xF << shift);
                for _ in 0..count {
                    if used == jokers {
                        break;
                    }
                    let from = if used < ws {
                        Rank::SMALL_JOKER
                    } else {
                        Rank::BIG_JOKER
                    };
                    wilds.push(from, to);
                    used += 1;
                }
            }
        }
    }
    Hand {
        kind,
        len: target.total() as u8,
        key,
        stars,
        group,
        links,
        cyclic,
        substituted: target,
        wilds,
    }
}
