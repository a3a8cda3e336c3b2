//! Verification of a completed 升級 match (`--game shengji`): the replay re-executed by the core
//! (`wire::shengji_client::verify_replay`: every state hash), the winner the client saw, and the
//! plays it had acknowledged found in the log. The Shuangkou counterpart is `verify.rs`.

use shuangkou::service::pb::shengji as pb;
use shuangkou::service::wire::shengji_client;

/// A match played to its end (or left), for verification after the run.
pub struct Finished {
    pub replay: pb::GetReplayResponse,
    /// Cards played by the client's seats, as acknowledged.
    pub plays: u64,
    /// The seats the server's bot played.
    pub bot_seats: Vec<u32>,
    /// The winner in the last state the client read.
    pub winner: Option<u32>,
}

/// Checks a finished match: the core re-executes the replay (every state hash), the winner is
/// the one the client saw, and every acknowledged play of the client's seats is in the log.
pub fn verify(f: &Finished) -> Result<(), String> {
    let game = shengji_client::verify_replay(&f.replay)?;
    use pb::replay_step::Action as R;
    let left = f
        .replay
        .steps
        .iter()
        .any(|s| matches!(s.action, Some(R::Leave(_))));
    if !left && game.winner().map(u32::from) != f.winner {
        return Err(format!(
            "{}: replayed winner {:?} != {:?} seen",
            f.replay.game_id,
            game.winner(),
            f.winner
        ));
    }
    let logged = f
        .replay
        .steps
        .iter()
        .filter(|s| matches!(s.action, Some(R::Play(_))) && !f.bot_seats.contains(&s.player))
        .count() as u64;
    if logged != f.plays {
        return Err(format!(
            "{}: {} plays acknowledged but {logged} in the log",
            f.replay.game_id, f.plays
        ));
    }
    Ok(())
}
