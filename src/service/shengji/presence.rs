//! Presence at a 升級 table: which seats are disconnected and since when, as the table's log says
//! (seed 002's 掉線: a dropped player has the variant's `reconnect_seconds`, 90 s by default, to
//! come back).
//!
//! Presence steps are table log entries, not core actions: `Disconnect` (the player's last
//! WatchGame stream dropped, after the grace), `Reconnect` (it came back inside the window) and
//! `Expire` (the window ran out: the seat leaves, its team loses, as with LeaveGame). Each is
//! checked here when it is prepared and again on every replay, against the entry's own time, so a
//! window keeps its end across restarts and replicas. Pure: no clock read, no store.

use crate::service::status::{ApiError, Reason};

/// A presence step of the table's log: the one step type both families log.
pub use crate::service::games::PresenceStep;

/// Since when each seat is disconnected (Unix ms of its logged `Disconnect`), by seat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Presence {
    since: [Option<u64>; 4],
}

fn refused(msg: String) -> ApiError {
    ApiError::new(Reason::BadRequest, msg)
}

impl Presence {
    /// True from the seat's logged disconnect until its reconnect (or the end of the match).
    pub fn is_disconnected(&self, seat: u8) -> bool {
        self.since(seat).is_some()
    }

    /// When the seat disconnected, while it is away.
    pub fn since(&self, seat: u8) -> Option<u64> {
        self.since.get(usize::from(seat)).copied().flatten()
    }

    /// The disconnected seats and when their windows of `window_ms` end.
    pub fn windows(&self, window_ms: u64) -> Vec<(u8, u64)> {
        (0..4u8)
            .filter_map(|s| self.since(s).map(|at| (s, at.saturating_add(window_ms))))
            .collect()
    }

    /// Checks `step` of `seat` at `at` and returns the presence after it: a disconnect of a
    /// connected seat, a reconnect of a disconnected one, an expiry once its window has run out.
    pub fn after(
        &self,
        step: PresenceStep,
        seat: u8,
        at: u64,
        window_ms: u64,
    ) -> Result<Presence, ApiError> {
        if seat >= 4 {
            return Err(refused(format!("no seat {seat} (seats are 0..4)")));
        }
        let mut next = *self;
        let slot = &mut next.since[usize::from(seat)];
        match (step, *slot) {
            (PresenceStep::Disconnect, None) => *slot = Some(at),
            (PresenceStep::Disconnect, Some(_)) => {
                return Err(refused(format!("seat {seat} is already disconnected")));
            }
            (PresenceStep::Reconnect | PresenceStep::Expire, None) => {
                return Err(refused(format!("seat {seat} is not disconnected")));
            }
            (PresenceStep::Reconnect, Some(_)) => *slot = None,
            (PresenceStep::Expire, Some(since)) => {
                let ends = since.saturating_add(window_ms);
                if at < ends {
                    return Err(refused(format!(
                        "seat {seat}'s reconnect window is open until {ends}"
                    )));
                }
                *slot = None;
            }
        }
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_is_checked_against_the_seat_and_the_window() {
        let p = Presence::default();
        assert!(p.after(PresenceStep::Reconnect, 1, 5, 100).is_err());
        assert!(p.after(PresenceStep::Expire, 1, 5, 100).is_err());
        assert!(p.after(PresenceStep::Disconnect, 4, 5, 100).is_err());
        let away = p.after(PresenceStep::Disconnect, 1, 5, 100).unwrap();
        assert_eq!(away.windows(100), vec![(1, 105)]);
        assert!(away.after(PresenceStep::Disconnect, 1, 6, 100).is_err());
        assert!(away.after(PresenceStep::Expire, 1, 104, 100).is_err());
        assert!(
            !away
                .after(PresenceStep::Expire, 1, 105, 100)
                .unwrap()
                .is_disconnected(1)
        );
        assert_eq!(away.after(PresenceStep::Reconnect, 1, 6, 100).unwrap(), p);
    }
}
