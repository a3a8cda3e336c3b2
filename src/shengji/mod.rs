//! 升級 (one deck, 54 cards): the second game family, from the last part of seed 000
//! (docs/rules/SHENGJI.md). A trick-taking game of the 拖拉機 family: two teams climb levels 2 … A; trump is
//! declared by showing a level card while the cards are dealt; each trick is one card from each
//! of the four seats; the 閑家's points decide the upgrade.
//!
//! The pure game core, like Shuangkou's `game` (no async, wire, script, store, logging or metrics
//! types; "now" is never read):
//! - [`order`]: levels, trumps, effective suits, the strength order, points, the follow rule;
//! - [`game`]: the match state machine, actions, events, errors, state hash and replay;
//! - `deal` and `play`: the rules of each phase (dealing and 亮主, the bottom rule, the exchange;
//!   tricks, 摳底, upgrade, next dealer, match end);
//! - [`hooks`]: the platform settings behind a trait, with the seed's rules as the default;
//! - [`view`]: what each viewer may see of the state and of each event;
//! - [`sim`]: random simulation with every invariant checked after every action;
//! - [`bot`]: a rule bot that decides from a view only.

pub mod bot;
mod deal;
pub mod game;
pub mod hooks;
pub mod order;
mod play;
pub mod sim;
pub mod view;

pub use game::{Action, DealResult, ENGINE_VERSION, Event, Game, GameError, Phase, Setup, Start};
pub use hooks::{Finish, ShengjiHooks, Side, StandardHooks, Upgrade};
pub use order::{EffSuit, Level, Order};
pub use view::{View, Viewer, event_view};
