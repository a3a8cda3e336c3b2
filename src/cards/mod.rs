//! Cards: ranks, suits, physical cards (ids 0..=107), card sets and rank counts.
//!
//! Owns the vocabulary every other module speaks and the text notation
//! (`3..9 T J Q K A 2 SJ BJ`, `10` for `T`, case-insensitive, separated by spaces or commas).
//! Depends on nothing but `std`, `thiserror` and `serde`.
//!
//! Card ids follow the public API (`shuangkou.v1`): `deck = id / 54`, `r = id % 54`; `r < 52` is a
//! suited card with `suit = r / 13` and rank index `r % 13` (0 → `3` … 12 → `2`); `r = 52` is the
//! small joker (小王), `r = 53` the big joker (大王).

//! The vocabulary is split by idea: `rank.rs` (ranks and suits), `card.rs` (one physical card and
//! the card errors), `set.rs` (sets of physical cards), `counts.rs` (multisets of ranks); all are
//! re-exported here, so `crate::cards::X` names each.

mod card;
mod counts;
mod rank;
mod set;
#[cfg(test)]
mod tests;

pub use card::{Card, CardError};
pub use counts::RankCounts;
pub use rank::{Rank, Suit};
pub use set::CardSet;

/// Number of physical cards in the two decks.
pub const DECK_SIZE: usize = 108;
/// Number of distinct ranks: `3..=2` (13) plus small and big joker.
pub const RANK_COUNT: usize = 15;

/// Index of the highest rank in straights and chains (A): sequences run within 3..A.
pub const TOP_SEQ: usize = Rank::ACE.index();

/// Index of the highest rank that forms pairs, triples and bombs (2): a wild joker becomes at
/// most this rank, and chain bombs through it are cyclic.
pub const TOP_SET: usize = Rank::TWO.index();
/// Copies of each suited rank in the two decks.
pub const COPIES_PER_RANK: u8 = 8;
/// Copies of each joker in the two decks.
pub const COPIES_PER_JOKER: u8 = 2;
