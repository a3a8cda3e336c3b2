//! The `GameEngine` service: each rpc authorizes (`access`), converts the request (`wire`),
//! acts on the one game under its lock through `games` (no `.await` on anything but the store
//! while holding it), and converts the reply (`wire`). Every rejection is an `ApiError` with a
//! stable reason.

use std::sync::Arc;

use super::digest::Body;
use super::retry::{self, Past};
use super::watch::{self, EventStream};
use super::{Call, Creation};
use crate::game::Game;
use crate::seat::Player;
use crate::service::access;
use crate::service::app::App;
use crate::service::bots;
use crate::service::clock::now_ms;
use crate::service::games::{Games, Shared};
use crate::service::history;
use crate::service::pb;
use crate::service::record::{
    Minting, Record, check_request_id, idempotency_conflict, request_digest,
};
use crate::service::session::{Idempotent, Session};
use crate::service::status::{ApiError, Reason};
use crate::service::wire;

/// The `GameEngine` service.
pub struct GameApi {
    app: Arc<App>,
}

impl GameApi {
    pub fn new(app: Arc<App>) -> GameApi {
        GameApi { app }
    }
}

rpcs! {
    pb::game_engine_server::GameEngine => GameApi, status = tonic::Status::from, client = [game_engine_client::GameEngineClient], {
        type WatchGameStream = EventStream;
    }
    list_variants(ListVariantsRequest) -> ListVariantsResponse = "ListVariants" => list;
    create_game(CreateGameRequest) -> CreateGameResponse = "CreateGame" => create;
    submit_play(SubmitPlayRequest) -> SubmitPlayResponse = "SubmitPlay" => submit;
    get_state(GetStateRequest) -> GetStateResponse = "GetState" => state;
    watch_game(WatchGameRequest) -> WatchGameStream = "WatchGame" => watch;
    get_hints(GetHintsRequest) -> GetHintsResponse = "GetHints" => hints;
    leave_game(LeaveGameRequest) -> LeaveGameResponse = "LeaveGame" => leave;
    get_replay(GetReplayRequest) -> GetReplayResponse = "GetReplay" => replay;
    list_games(ListGamesRequest) -> ListGamesResponse = "ListGames" => list_games;
    abort_game(AbortGameRequest) -> AbortGameResponse = "AbortGame" => abort;
}

/// The game a request is about and the caller's player in it, which it must be
/// (`refusal` otherwise).
async fn seat(
    call: &Call<'_>,
    game_id: &str,
    refusal: &'static str,
) -> Result<(Shared, Player), ApiError> {
    let (game, viewer) = access::authorize(
        call.app.games(),
        &call.caller,
        game_id,
        access::SHUANGKOU_TOKENS,
    )
    .await?;
    Ok((game, access::player(viewer, refusal)?))
}

/// [`seat`] for an action that may carry an idempotency key: the key's length is checked next.
async fn seat_action(
    call: &Call<'_>,
    game_id: &str,
    request_id: &str,
    refusal: &'static str,
) -> Result<(Shared, Player), ApiError> {
    let seated = seat(call, game_id, refusal).await?;
    check_request_id(request_id)?;
    Ok(seated)
}

async fn list(
    call: Call<'_>,
    _: pb::ListVariantsRequest,
) -> Result<pb::ListVariantsResponse, ApiError> {
    let variants = call.app.registry().list();
    Ok(pb::ListVariantsResponse {
        variants: variants.iter().map(wire::variant::variant).collect(),
    })
}

async fn state(call: Call<'_>, req: pb::GetStateRequest) -> Result<pb::GetStateResponse, ApiError> {
    let games = call.app.games();
    let (game, viewer) =
        access::authorize(games, &call.caller, &req.game_id, access::SHUANGKOU_TOKENS).await?;
    let mut live = games.current(&game).await?;
    let settled = live.game().results_settled();
    let (range, next) =
        wire::view::results_range(settled, req.results_from_deal, req.results_limit);
    // A page before the deals the session keeps comes from the store, read without the
    // session's lock (settled deals do not change; the state is read after it).
    let kept = live.game().results_in(range.clone());
    let page = match kept {
        Some(page) => page,
        None => {
            let origin = live.origin()?;
            drop(live);
            let deals = history::settled_deals(games.store(), &req.game_id, origin, range);
            let older = deals.await?;
            live = games.current(&game).await?;
            older
        }
    };
    let mut state = wire::state(live.game(), &live.record, viewer, &page, next);
    state.auto_policy = bots::auto_bot(games, &live.record).label();
    Ok(state)
}

async fn watch(call: Call<'_>, req: pb::WatchGameRequest) -> Result<EventStream, ApiError> {
    watch::open(Arc::clone(call.app), call.caller, req).await
}

async fn hints(call: Call<'_>, req: pb::GetHintsRequest) -> Result<pb::GetHintsResponse, ApiError> {
    let games = call.app.games();
    let (game, p) = seat(&call, &req.game_id, "hints need a seat token").await?;
    let mut query = wire::request::hint_query(&req)?;
    // A page fits half the message limit whatever the limit is configured to: a play is at
    // most ~300 bytes on the wire (27 card ids, four wild substitutions, its notations).
    let fits = (call.app.config().max_message_bytes / 2 / 300).max(1);
    let asked = match query.limit {
        0 => crate::hints::DEFAULT_LIMIT,
        n => n,
    };
    if asked <= crate::hints::MAX_LIMIT {
        query.limit = asked.min(fits);
    }
    let live = games.current(&game).await?;
    let h = live.hints(p, &query)?;
    drop(live);
    let mut resp = wire::hints(&h.plays, h.can_pass, h.your_turn, &h.page);
    if req.suggest && h.your_turn {
        let (play, bot) = bots::suggest(games, &game, p).await?;
        resp.suggested = Some(wire::view::suggested(play, &bot));
    }
    Ok(resp)
}

async fn leave(
    call: Call<'_>,
    req: pb::LeaveGameRequest,
) -> Result<pb::LeaveGameResponse, ApiError> {
    let games = call.app.games();
    let refusal = "leaving needs a seat token";
    let (game, p) = seat_action(&call, &req.game_id, &req.request_id, refusal).await?;
    let mut live = games.current(&game).await?;
    if req.dry_run {
        // What leaving would score now, on the prepared (never committed) entry.
        let prepared = live.prepare_leave(p, now_ms(), None)?;
        let (after, events) = prepared.outcome();
        let seq = live.game().seq();
        let preview = wire::submit_response(after, seq, now_ms(), events, p);
        return Ok(wire::leave_response(preview));
    }
    let body = Body::sha256(request_digest(&[b"leave"]));
    let asked = Asked::new(p, &req.request_id, &body, "LeaveGame");
    if let Some(resp) = original(games, &live, asked, Past::Remembered).await? {
        return Ok(wire::leave_response(resp));
    }
    let request = asked.idempotent();
    let now = now_ms();
    let submitted = match games
        .commit(&mut live, |l| l.prepare_leave(p, now, request))
        .await
    {
        Ok(s) => s,
        // Refused as a new leave: perhaps a retry of one older than the backlog.
        Err(e) => match original(games, &live, asked, Past::BeforeBacklog).await? {
            Some(resp) => return Ok(wire::leave_response(resp)),
            None => return Err(e),
        },
    };
    Ok(wire::leave_response(respond(&live, submitted.seq, p)?))
}

async fn replay(
    call: Call<'_>,
    req: pb::GetReplayRequest,
) -> Result<pb::GetReplayResponse, ApiError> {
    let games = call.app.games();
    let game = super::named_game(games, &req.game_id).await?;
    let live = super::replayable(games, &game, &call.caller, &req.game_id).await?;
    let log = crate::service::history::stored_log(games.store(), &req.game_id).await?;
    let replay = live.replay(&log)?;
    if req.max_actions as usize > wire::replay::MAX_PAGE_ACTIONS {
        return Err(ApiError::new(
            Reason::BadRequest,
            format!("max_actions is at most {}", wire::replay::MAX_PAGE_ACTIONS),
        ));
    }
    let first = wire::replay::page_start(&req.page_token, replay.entries.len())
        .map_err(|e| ApiError::new(Reason::BadRequest, e))?;
    // Half the message limit for the actions: the header (options, preset hands, scores)
    // and the framing stay far below the other half.
    let budget = call.app.config().max_message_bytes / 2;
    let mut page = wire::replay::page(&replay, first, req.max_actions as usize, budget);
    if first == 0 {
        // Re-executed with the game's own hooks: every deal's hands, for a replay viewer.
        let dealt = crate::service::replay::dealt_hands(&replay, live.hooks().as_ref())
            .map_err(|e| ApiError::new(Reason::Unavailable, e))?;
        page.dealt = wire::replay::dealt(&dealt);
    }
    Ok(page)
}

/// ListGames: the unfinished games (the store's list, in id order) of the caller's
/// platform, a page at a time. Each is read from the cache (recovery loads every unfinished
/// game at start), so a page costs a scan of the ids, not of the logs.
async fn list_games(
    call: Call<'_>,
    req: pb::ListGamesRequest,
) -> Result<pb::ListGamesResponse, ApiError> {
    let platform = access::platform_or_admin(call.app.keys(), &call.caller, "ListGames")?;
    let size = match req.page_size {
        0 => 50,
        n if n > 200 => {
            return Err(ApiError::new(
                Reason::BadRequest,
                "page_size is at most 200",
            ));
        }
        n => n as usize,
    };
    if req.page_token.len() > 64 {
        return Err(ApiError::new(
            Reason::BadRequest,
            "the page token is malformed",
        ));
    }
    let games = call.app.games();
    let mut ids = games.store().unfinished().await?;
    ids.sort_unstable();
    let mut page = pb::ListGamesResponse::default();
    for id in ids.iter().filter(|id| **id > req.page_token) {
        // A game that cannot be rebuilt (its error is logged where it is loaded) or that
        // finished meanwhile is not listed.
        let Ok(game) = games.load(id).await else {
            continue;
        };
        let live = game.lock().await;
        if live.finished() || (platform.is_some() && live.record.platform != platform) {
            continue;
        }
        if page.games.len() == size {
            page.next_page_token = page
                .games
                .last()
                .map(|g| g.game_id.clone())
                .unwrap_or_default();
            break;
        }
        page.games
            .push(wire::view::game_summary(live.game(), &live.record));
    }
    Ok(page)
}

/// AbortGame (admin key only): ends the match with an `Abort` action carrying the reason.
async fn abort(
    call: Call<'_>,
    req: pb::AbortGameRequest,
) -> Result<pb::AbortGameResponse, ApiError> {
    // The admin key (anyone on a server without keys, as for the admin service).
    call.admin()?;
    if req.reason.is_empty() || req.reason.len() > 512 {
        return Err(ApiError::new(
            Reason::BadRequest,
            "reason is required, at most 512 bytes",
        ));
    }
    let games = call.app.games();
    let game = super::named_game(games, &req.game_id).await?;
    let mut live = games.current(&game).await?;
    let now = now_ms();
    let reason = req.reason.as_str();
    let submitted = games
        .commit(&mut live, |l| l.prepare_abort(now, reason))
        .await?;
    tracing::warn!(game = %req.game_id, reason, seq = submitted.seq, "game aborted by the admin");
    Ok(pb::AbortGameResponse { seq: submitted.seq })
}

async fn create(
    call: Call<'_>,
    req: pb::CreateGameRequest,
) -> Result<pb::CreateGameResponse, ApiError> {
    let app = call.app;
    let full = app.games().full().then(|| {
        format!(
            "this process holds its maximum of {} games",
            app.config().max_games
        )
    });
    let (platform, admin) = super::may_create(app, &call.caller, full)?;
    check_request_id(&req.request_id)?;
    let req = wire::new_game(req);
    let compiled = super::active_variant(app.registry(), &req.base.variant, "")?;
    let asked = !req.base.seed.is_empty() || req.preset_hands.is_some();
    super::admin_only(asked, admin, "seed and preset_hands")?;
    let new = |minting: Minting<'_>| Record::new(&compiled, &req, minting);
    let id_parts = (platform, req.base.request_id.as_str(), "");
    match super::create_game(app, app.games(), id_parts, new).await? {
        Creation::New(record, tokens) => Ok(wire::created(&tokens, &record)),
        Creation::Existing(game) => {
            // The same request again: the same game and the same (derived) tokens.
            let live = game.lock().await;
            if live
                .record
                .request_digest
                .as_ref()
                .is_some_and(|d| *d != req.digest())
            {
                crate::metrics::idempotent("CreateGame", "conflict");
                return Err(idempotency_conflict(
                    req.base.request_id.len(),
                    "CreateGame",
                ));
            }
            crate::metrics::idempotent("CreateGame", "replayed");
            let again = live.record.tokens_again(app.token_key())?;
            Ok(wire::created(&again, &live.record))
        }
    }
}

async fn submit(
    call: Call<'_>,
    req: pb::SubmitPlayRequest,
) -> Result<pb::SubmitPlayResponse, ApiError> {
    let refusal = "playing needs a seat token";
    let (game, player) = seat_action(&call, &req.game_id, &req.request_id, refusal).await?;
    call.refuse_while_draining()?;
    let games = call.app.games();
    // No read of the store before the commit: its compare-and-append catches the copy up
    // (one round trip per play on a shared store), and the commit judges again on the
    // caught-up copy what this one refused or the store did not take.
    let mut live = games.locked(&game).await;
    // The token decides the player; a `seat` that is sent must name the same one.
    if let Some(sent) = req.seat.filter(|&s| s != u32::from(player)) {
        return Err(ApiError::new(
            Reason::PermissionDenied,
            format!(
                "the token is for player {player} ({}), not player {sent}; leave `seat` out",
                seat_text(live.game(), player)
            ),
        ));
    }
    let action = wire::action(&req)?;
    let expected = req.expected_seq;
    let body = Body::submit(action, expected);
    let asked = Asked::new(player, &req.request_id, &body, "SubmitPlay");
    let rid = asked.rid;
    if let Some(resp) = original(games, &live, asked, Past::Remembered).await? {
        return Ok(resp);
    }
    let request = asked.idempotent();
    let now = now_ms();
    // `expected_seq` is checked inside the commit, against the state it acts on (after
    // catching up with other replicas), so a request that lost a race is STALE_SEQ, never
    // judged on a newer state (NOT_YOUR_TURN…). Present 0 guards the first action.
    let committed = games
        .commit_cached(&mut live, |l| {
            // Applied meanwhile by another replica (seen once caught up): answered below.
            if rid.is_some_and(|r| l.request_seq(player, r).is_some()) {
                return Err(ApiError::new(
                    Reason::StaleSeq,
                    "the request was applied meanwhile",
                ));
            }
            super::expect_seq(expected, l.seq())?;
            l.prepare(player, action, now, request)
        })
        .await;
    match committed {
        Ok(submitted) => respond(&live, submitted.seq, player),
        // The same request, applied meanwhile by another replica (a retry racing its
        // original): the original result.
        Err(e) => match again(&live, player, rid, &body, "SubmitPlay")? {
            Some(seq) => respond(&live, seq, player),
            // Refused as a new action: perhaps a retry of an action older than the backlog.
            None => match original(games, &live, asked, Past::BeforeBacklog).await? {
                Some(resp) => Ok(resp),
                None => Err(naming_players(e, live.game(), player)),
            },
        },
    }
}

/// The SubmitPlay response for the action at `seq`, as `player` sees it.
fn respond(live: &Session, seq: u64, player: Player) -> Result<pb::SubmitPlayResponse, ApiError> {
    let (at, events) = live.action_at(seq)?;
    Ok(wire::submit_response(live.game(), seq, at, events, player))
}

/// A request that may retry an earlier one: its player, idempotency key, body and rpc.
#[derive(Clone, Copy)]
struct Asked<'a> {
    player: Player,
    rid: Option<&'a str>,
    body: &'a Body,
    rpc: &'static str,
}

impl<'a> Asked<'a> {
    /// `player`'s request with idempotency key `request_id` (none when empty).
    fn new(player: Player, request_id: &'a str, body: &'a Body, rpc: &'static str) -> Self {
        let rid = (!request_id.is_empty()).then_some(request_id);
        Asked {
            player,
            rid,
            body,
            rpc,
        }
    }

    /// The key and digest a new action records (none without a key).
    fn idempotent(&self) -> Option<Idempotent<'a>> {
        self.rid.map(|id| Idempotent {
            id,
            digest: self.body.recorded(),
        })
    }
}

/// The original response of a retried request (`player`'s key `rid`), if it is one: before the
/// request is judged (`Past::Remembered`), an action the backlog keeps ([`again`]) or one whose
/// key it remembers; once it was refused as a new one (`Past::BeforeBacklog`), an action older
/// than the backlog. Both but the backlog's are read from the store's log.
async fn original(
    games: &Games,
    live: &Session,
    asked: Asked<'_>,
    past: Past,
) -> Result<Option<pb::SubmitPlayResponse>, ApiError> {
    let Asked {
        player,
        rid,
        body,
        rpc,
    } = asked;
    if past == Past::Remembered
        && let Some(seq) = again(live, player, rid, body, rpc)?
    {
        return respond(live, seq, player).map(Some);
    }
    match retry::older(games, live, (player, rid), body, rpc, past).await? {
        Some(seq) => retry::respond(games, live, seq, player).await.map(Some),
        None => Ok(None),
    }
}

/// The seq of the action `player` already caused with this idempotency key, if it did (the same
/// request again: answered with its first result), or IDEMPOTENCY_CONFLICT when the key was used
/// for a different request.
fn again(
    live: &Session,
    player: Player,
    request_id: Option<&str>,
    body: &Body,
    rpc: &'static str,
) -> Result<Option<u64>, ApiError> {
    let Some((seq, stored)) = request_id.and_then(|r| live.request_seq(player, r)) else {
        return Ok(None);
    };
    if stored.is_some_and(|d| !body.is(d)) {
        crate::metrics::idempotent(rpc, "conflict");
        let len = request_id.map_or(0, str::len);
        return Err(idempotency_conflict(len, "request of this player"));
    }
    crate::metrics::idempotent(rpc, "replayed");
    Ok(Some(seq))
}

/// "seat 3" for the seat a player sits at this deal.
fn seat_text(game: &Game, player: Player) -> String {
    game.seat_of(player)
        .map_or_else(|| "no seat".to_string(), |s| format!("seat {s}"))
}

/// A rejection of a player's action that names the player and its seat: the engine speaks of
/// seats only ("it is seat 1's turn"), a client acts as a player.
fn naming_players(e: ApiError, game: &Game, player: Player) -> ApiError {
    let message = match e.reason {
        Reason::NotYourTurn => match game.turn() {
            Some(seat) => {
                let to_act = game
                    .seating()
                    .player_at(seat)
                    .unwrap_or(Player::new(seat.number()));
                format!(
                    "it is player {to_act}'s turn (seat {seat}), not player {player}'s ({})",
                    seat_text(game, player)
                )
            }
            None => return e,
        },
        Reason::CardsNotHeld | Reason::MustLead | Reason::DoesNotBeat => format!(
            "player {player} ({}): {}",
            seat_text(game, player),
            e.message
        ),
        _ => return e,
    };
    ApiError { message, ..e }
}
