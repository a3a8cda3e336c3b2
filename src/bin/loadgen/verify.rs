//! Verification of a completed Shuangkou game through the library's replay type: the replay as
//! `Replay::try_from` reads it, re-executed by `replay::verify`, then compared with what the
//! bots saw.

use shuangkou::game::Phase;
use shuangkou::seat::Player;
use shuangkou::service::pb;
use shuangkou::service::replay::{self, Replay};
use shuangkou::service::wire;

/// A completed Shuangkou game.
pub struct Finished {
    pub replay: pb::GetReplayResponse,
    /// The match result the bot received with its last play.
    pub scores: Vec<f64>,
    /// SubmitPlays acknowledged in this game.
    pub plays: u64,
    /// Players that are server-side bot seats (from this index on).
    pub first_bot: u8,
}

/// Verifies a finished game with the library's replay verification (`Replay::try_from` the
/// response, then `replay::verify`: the core re-executes the log with the embedded variant,
/// checking every state hash and the final totals), then checks it against what the bots saw.
pub fn verify(variant: &str, f: &Finished) -> Result<(), String> {
    let replay = Replay::try_from(&f.replay)?;
    if replay.config.variant != variant {
        return Err(format!(
            "the game's variant {} is not the embedded {variant}",
            replay.config.variant
        ));
    }
    let game = replay::verify(&replay)?.game;
    if game.phase() != Phase::Finished {
        return Err("the replayed match is not over".into());
    }
    let totals: Vec<f64> = game.totals().iter().map(|c| wire::points(*c)).collect();
    if totals != f.scores {
        return Err(format!(
            "replayed totals {totals:?} != the match result received {:?}",
            f.scores
        ));
    }
    // The client's own plays: every entry but the server-side bot seats'.
    let own = replay
        .entries
        .iter()
        .filter(|e| e.player < Player::new(f.first_bot))
        .count() as u64;
    if f.plays != own {
        return Err(format!(
            "{} plays acknowledged but {own} in the log",
            f.plays
        ));
    }
    Ok(())
}
