//! What a seat asks a 升級 table for, the table's log entry as stored, the events a table emits, and the replay's steps read
//! back from the stored log.
//!
//! One request is one entry and one seq: a seat's core actions (with the state hash after each),
//! the engine's action for a seat (托管: `auto`, hashed the same way), a leave, or a presence step
//! (`disconnect`, `reconnect`, `expire`: no core action, checked again on every replay).

use serde::{Deserialize, Serialize};

use crate::cards::{Card, CardSet};

use crate::game::Viewer;
use crate::service::status::{ApiError, Reason};
use crate::shengji::{Action, Event, event_view};
use crate::store::LogEntry;

/// Most deal steps one request may ask for (a whole deal is 49).
pub const MAX_DEAL_STEPS: u32 = 54;

/// What a seat asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Advance the deal by this many steps.
    Deal(u32),
    Declare(Card),
    Bury(CardSet),
    Play(Card),
}

/// One stored log entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stored {
    pub player: u8,
    pub at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub step: Step,
}

/// What an entry did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Step {
    /// A seat's core actions, with the state hash after each.
    Actions {
        actions: Vec<Action>,
        hashes: Vec<String>,
    },
    /// 托管: the engine's actions for the seat to act (its turn deadline passed, or it is
    /// disconnected), decided by the rule bot from the seat's view; hashed like a seat's.
    Auto {
        actions: Vec<Action>,
        hashes: Vec<String>,
    },
    /// The player left: the match ends, its team loses.
    Leave,
    /// The player's last WatchGame stream dropped (after the grace): its reconnect window opens.
    Disconnect,
    /// The player came back within its reconnect window.
    Reconnect,
    /// The player's reconnect window ran out: it leaves (the match ends, its team loses).
    Expire,
}

impl Step {
    /// The core actions and their recorded state hashes (none for a leave or presence step).
    pub fn actions(&self) -> Option<(&[Action], &[String])> {
        match self {
            Step::Actions { actions, hashes } | Step::Auto { actions, hashes } => {
                Some((actions, hashes))
            }
            _ => None,
        }
    }
}

/// Decodes a stored entry.
pub fn decode(e: &LogEntry) -> Result<Stored, ApiError> {
    serde_json::from_slice(&e.body).map_err(|err| {
        ApiError::new(
            Reason::StoreFailed,
            format!("log entry {} unreadable: {err}", e.seq),
        )
    })
}

/// Why the engine acted for a seat (托管).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoReason {
    /// The seat's turn deadline passed.
    Timeout,
    /// The seat is disconnected (its turns are played for it).
    Disconnected,
}

/// Why a seat left the match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaveReason {
    /// LeaveGame.
    Left,
    /// Its reconnect window ran out.
    Disconnected,
}

/// An event of a table: the core's, a seat leaving, presence, or the engine acting for a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableEvent {
    Game(Event),
    Left {
        seat: u8,
        winner: u8,
        reason: LeaveReason,
    },
    /// The seat's player disconnected; its window ends at `window_ends` (Unix ms).
    Disconnected {
        seat: u8,
        window_ends: u64,
    },
    Reconnected {
        seat: u8,
    },
    /// The engine acts for the seat (托管); the core events of its actions follow.
    Auto {
        seat: u8,
        reason: AutoReason,
    },
}

impl TableEvent {
    /// The event as `viewer` may see it.
    pub fn seen_by(&self, viewer: Viewer) -> TableEvent {
        match self {
            TableEvent::Game(e) => TableEvent::Game(event_view(e, viewer)),
            other => other.clone(),
        }
    }
}

/// One step of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayStep {
    pub seq: u64,
    pub at: u64,
    pub player: u8,
    pub what: ReplayAction,
    /// True when the engine acted for the seat (托管).
    pub auto: bool,
    /// The state hash after a core action (empty otherwise).
    pub hash: String,
}

/// What a replay step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayAction {
    Core(Action),
    Leave,
    Disconnect,
    Reconnect,
    Expire,
}

/// The replay's steps of a stored log (seq 1 first): every core action with its state hash, and
/// the leave and presence steps.
pub fn replay_steps(log: &[Stored]) -> Vec<ReplayStep> {
    let mut steps = Vec::new();
    for (i, e) in log.iter().enumerate() {
        let step = |what, auto, hash: &str| ReplayStep {
            seq: i as u64 + 1,
            at: e.at,
            player: e.player,
            what,
            auto,
            hash: hash.to_string(),
        };
        let other = match &e.step {
            Step::Actions { actions, hashes } | Step::Auto { actions, hashes } => {
                let auto = matches!(e.step, Step::Auto { .. });
                for (a, h) in actions.iter().zip(hashes) {
                    steps.push(step(ReplayAction::Core(*a), auto, h));
                }
                continue;
            }
            Step::Leave => ReplayAction::Leave,
            Step::Disconnect => ReplayAction::Disconnect,
            Step::Reconnect => ReplayAction::Reconnect,
            Step::Expire => ReplayAction::Expire,
        };
        steps.push(step(other, false, ""));
    }
    steps
}
