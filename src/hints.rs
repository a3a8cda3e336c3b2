//! Hints (提示): the legal plays of a hand, one bounded page at a time, optionally only some
//! hand types, with the total counts.
//!
//! A wild-heavy hand has tens of thousands of legal plays (千變: eleven pairs 3..K, an ace and the
//! four wild jokers lead 24,205 ways), far more than a hint button, a message or a screen needs.
//! [`page`] answers a [`Query`] (a limit, a start offset or page token, an optional set of hand
//! types) with at most [`MAX_LIMIT`] plays, in exactly the order of [`moves::legal_plays`]
//! (weakest first), so walking every page from offset 0 yields that list, filtered, with nothing
//! lost or repeated. The counts ([`Page::total`], [`Page::total_all`], [`Page::by_type`]) let a
//! client show "1–20 of 24,205" and type tabs without fetching the rest.
//!
//! A page token is opaque to clients: the next offset and a fingerprint of the question (hand,
//! previous play, rules, type filter), so a token reused for another hand or filter is refused
//! ([`HintError::ForeignToken`]) instead of silently paging through a different list. Legal plays
//! are computed for each page (bounded: a hand larger than the variant deals is refused,
//! [`HintError::HandTooLarge`]) and only the page is copied out.
//!
//! Pure rules core: depends on `cards`, `hand`, `moves` and `rules` (and sha2/postcard for the
//! fingerprint); no async, wire, script, store, logging or metrics types.

use sha2::{Digest, Sha256};

use crate::cards::RankCounts;
use crate::hand::{Hand, HandType};
use crate::moves::{self, Play};
use crate::rules::Rules;

/// Plays per page when the query does not say (`limit` 0).
pub const DEFAULT_LIMIT: usize = 20;
/// Most plays per page: a few hundred plays are a few tens of KB on any wire.
pub const MAX_LIMIT: usize = 500;
/// Longest page token accepted (a real one is about 30 characters).
const MAX_TOKEN_CHARS: usize = 64;

/// Where a page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// This many plays (of the filtered list) are skipped.
    Offset(usize),
    /// The `next_token` of an earlier page of the same question.
    Token(String),
}

impl Default for Start {
    fn default() -> Start {
        Start::Offset(0)
    }
}

/// Which page of which plays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// Plays per page: 0 = [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`].
    pub limit: usize,
    /// Where the page starts.
    pub start: Start,
    /// Only plays of these types (empty = every type).
    pub types: Vec<HandType>,
}

/// One page of legal plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The plays, weakest first (a slice of the filtered legal plays).
    pub plays: Vec<Play>,
    /// Position of the first play in the filtered list.
    pub offset: usize,
    /// Legal plays matching the type filter.
    pub total: usize,
    /// Legal plays of every type.
    pub total_all: usize,
    /// Legal plays per type (every type with at least one play, in `HandType::ALL` order).
    pub by_type: Vec<(HandType, usize)>,
    /// Offset of the next page; `None` on the last page.
    pub next_offset: Option<usize>,
    /// Token of the next page; `None` on the last page.
    pub next_token: Option<String>,
}

/// Why a page cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HintError {
    #[error("limit {limit} is above the maximum page of {max} plays")]
    LimitTooLarge { limit: usize, max: usize },
    #[error("offset {offset} is past the end of the {total} matching plays")]
    OffsetPastEnd { offset: usize, total: usize },
    #[error("the page token is malformed")]
    BadToken,
    #[error("the page token belongs to another hand, previous play or filter")]
    ForeignToken,
    #[error("the hand has {cards} cards; a hand of this variant holds at most {max}")]
    HandTooLarge { cards: u32, max: u8 },
}

/// The page of `query` among the legal plays of `hand` (following `previous`, or leading).
pub fn page(
    hand: RankCounts,
    previous: Option<&Hand>,
    rules: &Rules,
    query: &Query,
) -> Result<Page, HintError> {
    // A dealt hand bounds the work; a bigger one (a whole deck) has millions of plays.
    if hand.total() > u32::from(rules.hand_size) {
        return Err(HintError::HandTooLarge {
            cards: hand.total(),
            max: rules.hand_size,
        });
    }
    let limit = match query.limit {
        0 => DEFAULT_LIMIT,
        n if n > MAX_LIMIT => {
            return Err(HintError::LimitTooLarge {
                limit: n,
                max: MAX_LIMIT,
            });
        }
        n => n,
    };
    let fingerprint = fingerprint(hand, previous, rules, &query.types);
    let offset = match &query.start {
        Start::Offset(o) => *o,
        Start::Token(t) => decode_token(t, fingerprint)?,
    };
    let all = moves::legal_plays(hand, previous, rules);
    let wanted = |p: &&Play| query.types.is_empty() || query.types.contains(&p.hand.kind);
    let total = all.iter().filter(wanted).count();
    if offset > total {
        return Err(HintError::OffsetPastEnd { offset, total });
    }
    let plays: Vec<Play> = all
        .iter()
        .filter(wanted)
        .skip(offset)
        .take(limit)
        .copied()
        .collect();
    let end = offset + plays.len();
    let next_offset = (end < total).then_some(end);
    let by_type = HandType::ALL
        .into_iter()
        .map(|t| (t, all.iter().filter(|p| p.hand.kind == t).count()))
        .filter(|(_, n)| *n > 0)
        .collect();
    Ok(Page {
        plays,
        offset,
        total,
        total_all: all.len(),
        by_type,
        next_offset,
        next_token: next_offset.map(|o| encode_token(o, fingerprint)),
    })
}

/// The first 8 bytes of the SHA-256 of the question a token belongs to.
fn fingerprint(
    hand: RankCounts,
    previous: Option<&Hand>,
    rules: &Rules,
    types: &[HandType],
) -> u64 {
    let mut h = Sha256::new();
    h.update(hand.bits().to_le_bytes());
    // postcard is the crate's stable encoding of core values (the state hash uses it too); an
    // encoding failure only weakens the fingerprint to the other parts.
    h.update(postcard::to_allocvec(&previous).unwrap_or_default());
    h.update(postcard::to_allocvec(rules).unwrap_or_default());
    let mut sorted: Vec<&str> = types.iter().map(|t| t.name()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    h.update(sorted.join(",").as_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

fn encode_token(offset: usize, fingerprint: u64) -> String {
    format!("{offset:x}.{fingerprint:016x}")
}

fn decode_token(token: &str, fingerprint: u64) -> Result<usize, HintError> {
    if token.len() > MAX_TOKEN_CHARS {
        return Err(HintError::BadToken);
    }
    let (offset, print) = token.split_once('.').ok_or(HintError::BadToken)?;
    let offset = usize::from_str_radix(offset, 16).map_err(|_| HintError::BadToken)?;
    let print = u64::from_str_radix(print, 16).map_err(|_| HintError::BadToken)?;
    if print != fingerprint {
        return Err(HintError::ForeignToken);
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules::preset("qianbian").unwrap()
    }

    #[test]
    fn a_small_hand_in_pages_of_two() {
        let hand: RankCounts = "3 3 4 SJ".parse().unwrap();
        let all = moves::legal_plays(hand, None, &rules());
        let mut got = Vec::new();
        let mut start = Start::Offset(0);
        loop {
            let q = Query {
                limit: 2,
                start,
                types: vec![],
            };
            let p = page(hand, None, &rules(), &q).unwrap();
            assert!(p.plays.len() <= 2);
            got.extend(p.plays);
            match p.next_token {
                Some(t) => start = Start::Token(t),
                None => break,
            }
        }
        assert_eq!(got, all);
    }

    #[test]
    fn tokens_of_another_question_and_bad_sizes_are_refused() {
        let hand: RankCounts = "3 3 4 4 5 5 SJ".parse().unwrap();
        let q = Query {
            limit: 1,
            ..Query::default()
        };
        let p = page(hand, None, &rules(), &q).unwrap();
        let token = p.next_token.unwrap();
        let other: RankCounts = "3 3 4 4 5 5 BJ".parse().unwrap();
        let reuse = Query {
            limit: 1,
            start: Start::Token(token.clone()),
            types: vec![],
        };
        assert_eq!(
            page(other, None, &rules(), &reuse),
            Err(HintError::ForeignToken)
        );
        let filtered = Query {
            types: vec![HandType::Pair],
            ..reuse.clone()
        };
        assert_eq!(
            page(hand, None, &rules(), &filtered),
            Err(HintError::ForeignToken)
        );
        for bad in ["", "x", "1.zz", &"1".repeat(100)] {
            let q = Query {
                start: Start::Token(bad.to_string()),
                ..Query::default()
            };
            assert_eq!(page(hand, None, &rules(), &q), Err(HintError::BadToken));
        }
        let big = Query {
            limit: MAX_LIMIT + 1,
            ..Query::default()
        };
        assert!(matches!(
            page(hand, None, &rules(), &big),
            Err(HintError::LimitTooLarge { .. })
        ));
        let past = Query {
            start: Start::Offset(p.total + 1),
            ..Query::default()
        };
        assert!(matches!(
            page(hand, None, &rules(), &past),
            Err(HintError::OffsetPastEnd { .. })
        ));
        let deck = RankCounts::FULL;
        assert_eq!(
            page(deck, None, &rules(), &Query::default()),
            Err(HintError::HandTooLarge {
                cards: 108,
                max: 27
            })
        );
    }
}
