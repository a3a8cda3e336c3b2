//! The values of the table's interface: the match's settings, what a player does, the log's
//! entries, the phase, the errors, the top play, a settled deal and the events.

use serde::{Deserialize, Serialize};

use crate::cards::{Card, CardSet};
use crate::game::engine_error::EngineError;
use crate::game::hooks::{Centi, EscapeReason, Outcome, Settlement};
use crate::hand::{Declared, Hand, PlayError};
use crate::seat::{Player, Seat, Seating};

/// How a state hash is computed (recorded with each stored game, so a game verifies under the
/// scheme it was played with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HashScheme {
    /// SHA-256 of the JSON form (games recorded before the compact scheme).
    #[default]
    Json,
    /// SHA-256 of the postcard form (games recorded before the chained scheme).
    Compact,
    /// SHA-256 of the postcard form with the settled deals replaced by a running digest of them
    /// ([`Results`]): the cost of a hash does not grow with the match (every new game).
    Chained,
}

/// Settings of one match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameConfig {
    /// Variant id and pinned version (content hash).
    pub variant: String,
    pub version: String,
    /// Deals in the match (≥ 1).
    pub deals: u32,
    /// Milliseconds a seat has to act; `None` = no deadlines.
    pub turn_ms: Option<u64>,
    /// Consecutive timeouts after which the variant decides whether the seat escaped.
    pub max_consecutive_timeouts: u32,
    /// How long a disconnected player may stay away (90 s by default).
    pub reconnect_ms: u64,
}

impl GameConfig {
    /// `deals` deals of `variant` at `version` with the engine's defaults: no turn deadline, the
    /// variant asked after 3 consecutive timeouts, a 90 s reconnect window (what simulations,
    /// the arena, benchmarks and tests play; change a field with struct update syntax).
    pub fn new(variant: impl Into<String>, version: impl Into<String>, deals: u32) -> GameConfig {
        GameConfig {
            variant: variant.into(),
            version: version.into(),
            deals,
            turn_ms: None,
            max_consecutive_timeouts: 3,
            reconnect_ms: 90_000,
        }
    }
}

/// What a player does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Action {
    /// Play these physical cards, optionally declaring the interpretation.
    Play {
        cards: CardSet,
        declared: Option<Declared>,
    },
    /// Pass (過).
    Pass,
    /// Leave the game (an escape, 逃跑).
    Leave,
    /// The seat to act let its deadline pass: the engine plays for it by the old rule (托管:
    /// pass where it may, else the weakest lead). Logs written before [`Action::Auto`] hold it
    /// and replay with that rule.
    Timeout,
    /// The service played for the seat to act (托管 by a bot): these cards, or a pass when
    /// `cards` is empty, marked automatic. Accepted once the seat's deadline passed (counted as a
    /// timeout, so the variant may rule an escape) or while its player is disconnected.
    Auto {
        cards: CardSet,
        declared: Option<Declared>,
    },
    /// The player's connection dropped.
    Disconnect,
    /// The player is back.
    Reconnect,
    /// The reconnect window of a disconnected player ran out.
    ReconnectExpired,
    /// An operator ended the match (AbortGame): the deal in progress is not settled, the totals
    /// stay those of the settled deals. Logged with the player 0 (no player acts).
    Abort,
}

/// One entry of the action log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The acting player (for `Timeout`, the player whose turn it was).
    pub player: Player,
    pub action: Action,
    /// Milliseconds since the Unix epoch when the action was accepted.
    pub at: u64,
}

/// Where the match is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Playing,
    Finished,
}

/// Why an action was rejected. The reasons are stable (the service maps them to API reasons).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("no player {0}")]
    NoSuchPlayer(Player),
    #[error("it is seat {turn}'s turn, not seat {seat}'s")]
    NotYourTurn { seat: Seat, turn: Seat },
    #[error("the seat does not hold these cards")]
    CardsNotHeld,
    #[error("{0}")]
    Play(PlayError),
    #[error("the seat leads this trick and cannot pass")]
    MustLead,
    #[error("the turn deadline has not passed")]
    NotDue,
    #[error("the player is not disconnected")]
    NotDisconnected,
    #[error("the reconnect window has not run out")]
    WindowOpen,
    /// The engine's own rejections: the match is over, a script failed, a bad setup, a replay
    /// that diverged.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The top play of the current trick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Top {
    pub seat: Seat,
    pub cards: CardSet,
    pub hand: Hand,
}

/// A settled deal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DealResult {
    pub deal_number: u32,
    /// `None` when the deal ended by an escape.
    pub outcome: Option<Outcome>,
    pub escaped: Option<Seat>,
    /// Seats in finishing order.
    pub places: Vec<Seat>,
    /// The player at each seat of that deal.
    pub players: Seating,
    pub settlement: Settlement,
}

/// Something that happened, in full (views redact it per viewer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    DealStarted {
        deal_number: u32,
        /// Player at each seat.
        players: Seating,
        leader: Seat,
        shown_card: Card,
        /// Every seat's hand (redacted in views).
        hands: Vec<CardSet>,
    },
    Played {
        seat: Seat,
        cards: CardSet,
        hand: Hand,
        cards_left: u8,
        auto: bool,
    },
    Passed {
        seat: Seat,
        auto: bool,
    },
    TrickWon {
        winner: Seat,
        leader: Seat,
        jie_feng: bool,
    },
    PlayerOut {
        seat: Seat,
        place: u8,
    },
    Escaped {
        seat: Seat,
        reason: EscapeReason,
    },
    /// A player who had already gone out this deal left (or let the reconnect window run out):
    /// not an escape; the deal plays on and the match ends with it (docs/VARIANTS.md, "Leaving
    /// after going out").
    Left {
        seat: Seat,
    },
    DealEnded(DealResult),
    MatchEnded {
        totals: Vec<Centi>,
    },
    /// The match was aborted by an operator (no MatchEnded follows).
    Aborted,
    Disconnected {
        seat: Seat,
    },
    Reconnected {
        seat: Seat,
    },
}
