//! The `ShengjiEngine` service (`shengji.v1`): each rpc authorizes with the shared credentials
//! (`access`), converts the request (`wire::shengji`), acts on one table under its lock through
//! `Tables` (the shared owner of live games, `service::games`, serving 升級: the commit
//! protocol), and converts the reply. Every rpc runs through the shared
//! prologue and epilogue ([`super::unary`]); rejections carry the shared reasons, or a 升級
//! rule's name, in ErrorInfo domain `shengji.v1`.

use std::pin::Pin;
use std::sync::Arc;

use tokio_stream::Stream;
use tonic::Status;

use super::wakeup::{Counted, Wakeups, send_all, settle};
use super::{Call, Creation, Subject};
use crate::game::Viewer;
use crate::service::access::{self, TokenRules};
use crate::service::app::App;
use crate::service::clock::now_ms;
use crate::service::pb::shengji as pb;
use crate::service::record::Minting;
use crate::service::shengji::family::{self, SharedTable};
use crate::service::shengji::history;
use crate::service::shengji::record::ShengjiRecord;
use crate::service::shengji::{DOMAIN, RULE};
use crate::service::status::{ApiError, Reason};
use crate::service::wire::shengji as wire;
use crate::variants::Family;

/// The service name reported by health.
pub const SERVICE: &str = "shengji.v1.ShengjiEngine";

pub type EventStream = Pin<Box<dyn Stream<Item = Result<pb::GameEvent, Status>> + Send>>;

/// The `ShengjiEngine` service.
pub struct ShengjiApi {
    app: Arc<App>,
}

/// The tonic service with the message size limit both ways.
pub fn service(
    app: &Arc<App>,
    limit: usize,
) -> pb::shengji_engine_server::ShengjiEngineServer<ShengjiApi> {
    pb::shengji_engine_server::ShengjiEngineServer::new(ShengjiApi {
        app: Arc::clone(app),
    })
    .max_decoding_message_size(limit)
    .max_encoding_message_size(limit)
}

macro_rules! about_a_game {
    ($($t:ty),*) => { $(impl Subject for $t { fn game_id(&self) -> &str { &self.game_id } })* };
}
about_a_game!(
    pb::SubmitActionRequest,
    pb::GetStateRequest,
    pb::WatchGameRequest,
    pb::GetHintsRequest,
    pb::LeaveGameRequest,
    pb::GetReplayRequest
);
impl Subject for pb::CreateGameRequest {
    fn idempotent_create(&self) -> Option<(&str, &'static str)> {
        Some((&self.request_id, "shengji:"))
    }
}

/// A rejection as a `shengji.v1` status: the shared reason's code; the reason in ErrorInfo is the
/// 升級 rule's name when there is one.
pub fn status(e: ApiError) -> Status {
    let rule = e
        .metadata
        .iter()
        .find(|(k, _)| k == RULE)
        .map(|(_, v)| v.as_str());
    crate::service::status::status_in(&e, DOMAIN, rule.unwrap_or(e.reason.name()))
}

/// `shengji.v1`'s token rules: the token's own game is looked up first; a token that does not
/// verify (or names no game) is UNAUTHENTICATED.
const TOKENS: TokenRules = TokenRules {
    game_first: false,
    bad_token: || ApiError::new(Reason::Unauthenticated, "unknown or expired token"),
};

/// The table a request is about and how the caller sees it: the token verified against the game
/// it names (an unknown token is UNAUTHENTICATED on any game; a genuine one for another game is
/// PERMISSION_DENIED), or the admin key.
async fn authorize(call: &Call<'_>, game_id: &str) -> Result<(SharedTable, Viewer), ApiError> {
    access::authorize(call.app.shengji(), &call.caller, game_id, TOKENS).await
}

/// The table and the caller's seat, which it must have.
async fn seat(
    call: &Call<'_>,
    game_id: &str,
    refusal: &'static str,
) -> Result<(SharedTable, u8), ApiError> {
    let (table, viewer) = authorize(call, game_id).await?;
    Ok((table, access::player(viewer, refusal)?.number()))
}

rpcs! {
    pb::shengji_engine_server::ShengjiEngine => ShengjiApi, status = status, client = [shengji_engine_client::ShengjiEngineClient], {
        type WatchGameStream = EventStream;
    }
    create_game(CreateGameRequest) -> CreateGameResponse = "shengji.CreateGame" => create;
    submit_action(SubmitActionRequest) -> SubmitActionResponse = "shengji.SubmitAction" => submit;
    get_state(GetStateRequest) -> GetStateResponse = "shengji.GetState" => state;
    watch_game(WatchGameRequest) -> WatchGameStream = "shengji.WatchGame" => watch;
    get_hints(GetHintsRequest) -> GetHintsResponse = "shengji.GetHints" => hints;
    leave_game(LeaveGameRequest) -> LeaveGameResponse = "shengji.LeaveGame" => leave;
    get_replay(GetReplayRequest) -> GetReplayResponse = "shengji.GetReplay" => replay;
}

async fn state(call: Call<'_>, req: pb::GetStateRequest) -> Result<pb::GetStateResponse, ApiError> {
    let (table, viewer) = authorize(&call, &req.game_id).await?;
    let live = call.app.shengji().current(&table).await?;
    Ok(pb::GetStateResponse {
        state: Some(wire::state(&live, viewer)),
    })
}

async fn hints(call: Call<'_>, req: pb::GetHintsRequest) -> Result<pb::GetHintsResponse, ApiError> {
    let (table, p) = seat(&call, &req.game_id, "hints need a seat token").await?;
    let live = call.app.shengji().current(&table).await?;
    Ok(wire::hints(&live.hints(p)?))
}

async fn leave(
    call: Call<'_>,
    req: pb::LeaveGameRequest,
) -> Result<pb::LeaveGameResponse, ApiError> {
    let tables = call.app.shengji();
    let refusal = "leaving needs a seat token";
    let (table, p) = seat(&call, &req.game_id, refusal).await?;
    let mut live = tables.current(&table).await?;
    let now = now_ms();
    let seq = tables
        .commit(&mut live, |t| t.prepare_leave(p, now))
        .await?;
    Ok(pb::LeaveGameResponse {
        seq,
        finished: live.finished(),
    })
}

async fn replay(
    call: Call<'_>,
    req: pb::GetReplayRequest,
) -> Result<pb::GetReplayResponse, ApiError> {
    let tables = call.app.shengji();
    let table = super::named_game(tables, &req.game_id).await?;
    let live = super::replayable(tables, &table, &call.caller, &req.game_id).await?;
    let r = &live.record.base;
    let script = tables
        .registry()
        .get(&r.variant, &r.version)
        .map(|v| v.source().to_string())
        .unwrap_or_default();
    let log = history::stored_log(tables.store(), &req.game_id).await?;
    Ok(wire::replay(&live, &log, script))
}

async fn create(
    call: Call<'_>,
    req: pb::CreateGameRequest,
) -> Result<pb::CreateGameResponse, ApiError> {
    let tables = call.app.shengji();
    let full = tables
        .full()
        .then(|| "this process holds its maximum of 升級 games".to_string());
    let (platform, admin) = super::may_create(call.app, &call.caller, full)?;
    let req = wire::new_game(req)?;
    let compiled = super::active_variant(tables.registry(), &req.base.variant, "升級 ")?;
    super::admin_only(
        !req.base.seed.is_empty() || req.deck.is_some(),
        admin,
        "seed and deck",
    )?;
    let new = |minting: Minting<'_>| ShengjiRecord::new(&compiled, &req, minting);
    let id_parts = (platform, req.base.request_id.as_str(), "shengji:");
    match super::create_game(call.app, tables, id_parts, new).await? {
        Creation::New(record, tokens) => Ok(wire::created(&tokens, &record)),
        Creation::Existing(table) => {
            let live = table.lock().await;
            let again = live.record.base.tokens_again(call.app.token_key())?;
            Ok(wire::created(&again, &live.record))
        }
    }
}

async fn submit(
    call: Call<'_>,
    req: pb::SubmitActionRequest,
) -> Result<pb::SubmitActionResponse, ApiError> {
    let tables = call.app.shengji();
    let (table, player) = seat(&call, &req.game_id, "acting needs a seat token").await?;
    if req.seat != u32::from(player) {
        return Err(ApiError::new(
            Reason::PermissionDenied,
            format!("the token is for seat {player}, not {}", req.seat),
        ));
    }
    if live_is_bot(&table, player).await {
        return Err(ApiError::new(
            Reason::PermissionDenied,
            format!("seat {player} is played by the server's bot"),
        ));
    }
    if req.request_id.len() > 128 {
        return Err(ApiError::new(
            Reason::BadRequest,
            "request_id is at most 128 bytes",
        ));
    }
    let command = wire::command(&req)?;
    call.refuse_while_draining()?;
    // The compare-and-append is the catch-up (`commit_cached`): one store round trip per action.
    let mut live = tables.locked(&table).await;
    let rid = (!req.request_id.is_empty()).then_some(req.request_id.as_str());
    if let Some(r) = rid
        && let Some((seq, at, events)) =
            history::retried(tables.store(), &live, player, r, false).await?
    {
        return Ok(wire::submitted(&live, (seq, at, &events), player));
    }
    let now = now_ms();
    let expected = req.expected_seq;
    let committed = tables
        .commit_cached(&mut live, |t| {
            // 0: none sent (`shengji.v1`'s field is not optional).
            super::expect_seq((expected != 0).then_some(expected), t.seq())?;
            t.prepare(player, command, now, rid)
        })
        .await;
    match committed {
        Ok(seq) => {
            // The bots act after the request that gives them the turn; the reply is this
            // request's (its seq and events), with the state after the bots.
            if let Err(e) = family::run_bots(tables, &mut live).await {
                tracing::warn!(game = %req.game_id, error = %e, "a bot seat's action failed");
            }
            let (at, events) = history::events_of(tables.store(), &live, seq).await?;
            Ok(wire::submitted(&live, (seq, at, &events), player))
        }
        Err(e) => match rid {
            Some(r) => match history::retried(tables.store(), &live, player, r, true).await? {
                Some((seq, at, events)) => Ok(wire::submitted(&live, (seq, at, &events), player)),
                None => Err(e),
            },
            None => Err(e),
        },
    }
}

/// Opens the event stream of a table for `caller`, from `req.from_seq` on, until the match is
/// over, the client goes away or the server drains.
async fn watch(call: Call<'_>, req: pb::WatchGameRequest) -> Result<EventStream, ApiError> {
    let (table, viewer) = authorize(&call, &req.game_id).await?;
    let app = Arc::clone(call.app);
    let guard = app.shengji_presence().open(&req.game_id, viewer)?;
    let notify = table.lock().await.subscribe();
    let mut wakeups = Wakeups::new(
        notify,
        app.shengji().store(),
        &req.game_id,
        app.streams_closing(),
    )
    .moving(app.ownership(), &req.game_id);
    let mut next = (req.from_seq > 0).then_some(req.from_seq);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::GameEvent, Status>>(64);
    let counted = Counted::new();
    tokio::spawn(async move {
        // Held while the stream lives: the player is connected (presence), the stream counted.
        let _guard = (guard, counted);
        let mut replay = None;
        loop {
            let batch: Vec<pb::GameEvent> =
                match history::watch_batch(app.shengji(), &table, &mut replay, next).await {
                    Err(e) => {
                        let _ = tx.send(Err(status(e))).await;
                        break;
                    }
                    Ok(events) => events
                        .iter()
                        .map(|(seq, at, e)| wire::event(*seq, *at, e, viewer))
                        .collect(),
                };
            let caught_up = batch.is_empty();
            let sent = send_all(&tx, batch, |ev| {
                next = Some(next.map_or(ev.seq, |n| n.max(ev.seq)));
            })
            .await;
            if !sent {
                return;
            }
            if settle(app.shengji(), &table, viewer, next.unwrap_or(0)).await {
                break;
            }
            // A page replayed from the store may have more after it: wait only when caught up.
            if !caught_up {
                continue;
            }
            if !wakeups.wait(&tx, |e| Err(status(e)), "seq").await {
                break;
            }
        }
    });
    Ok(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx)))
}

async fn live_is_bot(table: &SharedTable, seat: u8) -> bool {
    table.lock().await.record.is_bot(seat)
}
