//! When a 升級 table waits on a seat, and what the engine does about it (the table's side of the
//! contract with the shared schedule): the player to act, its turn deadline (the variant's
//! `turn_seconds` from the last core action), the disconnected players' reconnect windows, the
//! 托管 decision and its `auto` entry, presence steps, and the check a logged `auto` entry must
//! pass on replay. Pure: `now` is passed in.

use crate::game::Viewer;
use crate::seat::Player;
use crate::service::status::{ApiError, Reason};

use super::super::turns::{self, Timers};
use super::{AutoReason, Command, Prepared, PresenceStep, Step, Stored, Table};

impl Table {
    /// The player whose action the game waits for: the seat that deals while dealing, the
    /// dealer while burying, the seat to play ([`turns::seat_to_act`]); `None` once it is over.
    pub fn player_to_act(&self) -> Option<Player> {
        if self.finished() {
            return None;
        }
        turns::seat_to_act(&self.game).map(Player::new)
    }

    /// Unix ms when the current turn times out: the variant's `turn_seconds` after the last
    /// core action (presence steps do not move it); `None` without turn timers or turn.
    pub fn deadline(&self) -> Option<u64> {
        self.player_to_act()?;
        Some(self.moved_at.saturating_add(self.timers.live_turn_ms()?))
    }

    pub fn deadline_passed(&self, now: u64) -> bool {
        self.deadline().is_some_and(|d| now >= d)
    }

    /// The player to act is disconnected (the engine plays its turns: at once or at its
    /// deadline, as the server is configured).
    pub fn turn_is_away(&self) -> bool {
        self.player_to_act()
            .is_some_and(|p| self.is_disconnected(p))
    }

    pub fn is_disconnected(&self, player: Player) -> bool {
        self.presence.is_disconnected(player.number())
    }

    /// The milliseconds a disconnected seat keeps its place, and a seat has to act.
    pub fn timers(&self) -> Timers {
        self.timers
    }

    /// Disconnected players and when their reconnect windows end (Unix ms); none once over.
    pub fn open_windows(&self) -> Vec<(Player, u64)> {
        if self.finished() {
            return Vec::new();
        }
        self.presence
            .windows(self.timers.reconnect_ms)
            .into_iter()
            .map(|(s, at)| (Player::new(s), at))
            .collect()
    }

    /// The 托管 decision for the player to act: the rule bot's, from that player's view only,
    /// seeded from the seed commitment, the seq and the player (`turns::decide`).
    pub fn auto_command(&self) -> Result<Option<(Player, Command)>, ApiError> {
        let Some(player) = self.player_to_act() else {
            return Ok(None);
        };
        let view = self.view(Viewer::Player(player));
        let commitment = self.record.base.seed_commitment();
        let command = turns::decide(&self.game, &self.hooks, &view, &commitment, player.number())?;
        Ok(Some((player, command)))
    }

    /// 托管: `command` played for `player` (the player to act, whose deadline passed at `now` or
    /// who is disconnected), logged as an `auto` entry; the replay checks both again.
    pub fn prepare_auto(
        &self,
        player: Player,
        command: Command,
        now: u64,
    ) -> Result<Prepared, ApiError> {
        let actions = self.actions_of(player.number(), command)?;
        self.prepare_stored(
            Stored {
                player: player.number(),
                at: now,
                request_id: None,
                step: Step::Auto {
                    actions,
                    hashes: Vec::new(),
                },
            },
            false,
        )
    }

    /// A presence step of `player` at `now`, logged (`Expire`: the seat leaves).
    pub fn prepare_presence(
        &self,
        player: Player,
        step: PresenceStep,
        now: u64,
    ) -> Result<Prepared, ApiError> {
        let step = step.pick(Step::Disconnect, Step::Reconnect, Step::Expire);
        self.prepare_stored(
            Stored {
                player: player.number(),
                at: now,
                request_id: None,
                step,
            },
            false,
        )
    }

    /// Why the engine may act for `seat` at `at`: its deadline passed, or it is disconnected. A
    /// stored entry (`replaying`) is checked against the variant's `turn_seconds` even where
    /// this server does not time turns out (it was logged by one that did).
    pub(super) fn auto_reason(
        &self,
        seat: u8,
        at: u64,
        replaying: bool,
    ) -> Result<AutoReason, ApiError> {
        if self.player_to_act() != Some(Player::new(seat)) {
            return Err(ApiError::new(
                Reason::NotYourTurn,
                format!("托管 for seat {seat}, but it is not the seat to act"),
            ));
        }
        let turn_ms = match replaying {
            true => Some(self.timers.turn_ms),
            false => self.timers.live_turn_ms(),
        };
        if turn_ms.is_some_and(|ms| at >= self.moved_at.saturating_add(ms)) {
            Ok(AutoReason::Timeout)
        } else if self.presence.is_disconnected(seat) {
            Ok(AutoReason::Disconnected)
        } else {
            Err(ApiError::new(
                Reason::BadRequest,
                format!("托管 for seat {seat} before its turn deadline"),
            ))
        }
    }
}
