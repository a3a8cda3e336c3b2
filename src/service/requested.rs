//! A SubmitPlay's action as the domain reads it: a play (its cards and declared interpretation)
//! or a pass. The wire parses a request into it (`wire::action`, which re-exports it as
//! `wire::Action`) and the session applies it (`Session::prepare`), so the session sees no wire.

use crate::cards::CardSet;
use crate::hand::Declared;

/// A player's requested action, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Play {
        cards: CardSet,
        declared: Option<Declared>,
    },
    Pass,
}
