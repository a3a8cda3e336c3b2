//! Idempotent retries of actions older than what the live game keeps (`backlog`): the action
//! a key caused is found in the store's log, and its reply re-derived from it (`history`).
//!
//! A retry within the backlog is answered before it is judged (`game::again`); so is one whose
//! key the backlog still remembers as a fingerprint (`Past::Remembered`: one entry read). An older
//! retry is looked up in the store only once the request was refused as a new action (a retry
//! of an old play no longer applies: its seq is stale, its cards are gone or the turn has
//! moved), so a new action costs no read of the log.

use super::digest::Body;
use crate::seat::Player;
use crate::service::games::Games;
use crate::service::history::{self, History};
use crate::service::pb;
use crate::service::record::idempotency_conflict;
use crate::service::session::Session;
use crate::service::status::ApiError;
use crate::service::wire;

/// Where a retry's original action is looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Past {
    /// Only a key the backlog still remembers (its fingerprint): one entry read, before the
    /// request is judged as a new action. A retried pass, legal again by the time it is
    /// retried, is the original pass, not a second one.
    Remembered,
    /// The whole log before the backlog: once the request was refused as a new action.
    BeforeBacklog,
}

/// The seq of the action `player` caused with this key before the backlog, if any (the
/// original request again), or IDEMPOTENCY_CONFLICT when the key was used for a different
/// request.
pub async fn older(
    games: &Games,
    live: &Session,
    (player, request_id): (Player, Option<&str>),
    body: &Body,
    rpc: &'static str,
    past: Past,
) -> Result<Option<u64>, ApiError> {
    let Some(rid) = request_id else {
        return Ok(None);
    };
    let range = match past {
        Past::BeforeBacklog => (0, live.first_kept()),
        Past::Remembered => match live.remembered_seq(player, rid) {
            Some(seq) => (seq - 1, seq),
            None => return Ok(None),
        },
    };
    lookup(games, live, player, (rid, body), rpc, range).await
}

/// The action of `player` with key `rid` among the log's entries in `range` (after, before):
/// its seq when the request is the same (by digest, [`Body::is`]), IDEMPOTENCY_CONFLICT when not.
async fn lookup(
    games: &Games,
    live: &Session,
    player: Player,
    (rid, body): (&str, &Body),
    rpc: &'static str,
    range: (u64, u64),
) -> Result<Option<u64>, ApiError> {
    let found = history::find_request(games.store(), &live.record.id, player, rid, range).await?;
    let Some((seq, stored)) = found else {
        return Ok(None);
    };
    if stored.is_some_and(|d| !body.is(&d)) {
        crate::metrics::idempotent(rpc, "conflict");
        return Err(idempotency_conflict(rid.len(), "request of this player"));
    }
    crate::metrics::idempotent(rpc, "replayed");
    Ok(Some(seq))
}

/// The SubmitPlay response for the action at `seq` as `player` sees it: from the backlog, or
/// re-derived from the store's log for an older action.
pub async fn respond(
    games: &Games,
    live: &Session,
    seq: u64,
    player: Player,
) -> Result<pb::SubmitPlayResponse, ApiError> {
    if seq >= live.first_kept() {
        let (at, events) = live.action_at(seq)?;
        return Ok(wire::submit_response(live.game(), seq, at, events, player));
    }
    let (at, events) = History::new(live.origin()?, &live.record.id)
        .action_at(games.store(), seq)
        .await?;
    Ok(wire::submit_response(live.game(), seq, at, &events, player))
}
