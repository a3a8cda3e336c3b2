//! Shuangkou (雙扣): a server-side engine for the partnership climbing card game of Wenzhou.
//!
//! The rules core, pure and synchronous (no async, wire, script or metrics types):
//! - [`cards`]: ranks, suits, card ids 0..=107, card sets, rank counts, text notation;
//! - [`rules`]: the typed card-rule settings of a variant;
//! - [`hand`]: classification of a play (with wild jokers) into its interpretations;
//! - [`compare`]: `beats` and the bomb order;
//! - [`moves`]: every legal play of a hand, weakest first.

pub mod cards;
pub mod compare;
pub mod hand;
pub mod moves;
pub mod rules;
