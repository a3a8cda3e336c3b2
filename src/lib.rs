//! Shuangkou (雙扣): a server-side engine for the partnership climbing card game of Wenzhou.
//!
//! The rules core, pure and synchronous (no async, wire, script or metrics types):
//! - [`cards`]: ranks, suits, card ids 0..=107, card sets, rank counts, text notation;
//! - [`rules`]: the typed card-rule settings of a variant;
//! - [`hand`]: classification of a play (with wild jokers) into its interpretations;
//! - [`compare`]: `beats` and the bomb order;
//! - [`moves`]: every legal play of a hand, weakest first;
//! - [`hints`]: those plays one bounded, filterable page at a time, with the counts (提示);
//! - [`seat`]: the seat and player numbers and the seating between them;
//! - [`game`]: the deal engine (state machine, seating, tricks, views, log and replay);
//! - [`bot`]: bots that play a seat from its player view only;
//! - [`shengji`]: the second game family, 升級 (one deck): card order, deal, tricks, levels;
//! - [`determinism`]: the seeded deal streams and state hashes both families share;
//! - `accessors`: the read accessors of both families' states, written from a list of fields;
//! - [`quote`]: client values quoted back in refusals, shortened.
//!
//! Adapters around the core:
//! - [`variants`]: the Rhai host that turns `variants/*.rhai` into rules and hooks;
//! - [`cli`]: the command-line tools of the `shuangkou` binary.

mod accessors;
pub mod bot;
pub mod cards;
pub mod classify;
pub mod cli;
pub mod compare;
pub mod config;
pub mod determinism;
pub mod game;
pub mod hand;
pub mod hints;
pub mod metrics;
pub mod moves;
pub mod quote;
pub mod rules;
pub mod seat;
pub mod service;
pub mod shengji;
pub mod store;
pub mod variants;
