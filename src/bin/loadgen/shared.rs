//! What every worker of a run shares: the arguments, the variant's rules, the budget of games
//! still to create, the deadline and the `--rate` schedule.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use shuangkou::rules::Rules;

use crate::args::Args;

/// The run, as every worker sees it.
pub struct Shared {
    pub args: Args,
    pub rules: Rules,
    /// Games still to create (`--deals` and `--populate`); u64::MAX = unbounded.
    pub games_left: AtomicU64,
    pub stop: AtomicBool,
    pub deadline: Option<Instant>,
    /// Rate schedule: plays scheduled so far.
    pub scheduled: AtomicU64,
    pub start: Instant,
}

impl Shared {
    /// Takes one game to play from the run's budget; false when the run is over.
    pub fn take_game(&self) -> bool {
        if self.out_of_time() {
            return false;
        }
        self.games_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| match n {
                u64::MAX => Some(u64::MAX),
                0 => None,
                n => Some(n - 1),
            })
            .is_ok()
    }

    pub fn out_of_time(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}
