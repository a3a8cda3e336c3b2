//! The `GameEngine` service: each rpc authorizes (`access`), converts the request (`wire`),
//! acts on the one game under its lock through `games` (no `.await` on anything but the store
//! while holding it), and converts the reply (`wire`). Every rejection is an `ApiError` with a
//! stable reason.

use std::sync::Arc;

use super::watch::{self, EventStream};
use crate::service::access::{self, Caller};
use crate::service::app::App;
use crate::service::auth;
use crate::service::bots;
use crate::service::clock::now_ms;
use crate::service::games::Shared;
use crate::service::pb;
use crate::service::record::Record;
use crate::service::session::Session;
use crate::service::status::{ApiError, Reason};
use crate::service::wire;
use crate::store::Created;

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
    pb::game_engine_server::GameEngine => GameApi {
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
}

impl GameApi {
    /// The game a request is about and the caller's player in it, which it must be
    /// (`refusal` otherwise).
    async fn seat(
        &self,
        caller: &Caller,
        game_id: &str,
        refusal: &'static str,
    ) -> Result<(Shared, u8), ApiError> {
        let (game, viewer) = access::authorize(self.app.games(), caller, game_id).await?;
        Ok((game, access::player(viewer, refusal)?))
    }

    async fn list(
        &self,
        _: Caller,
        _: pb::ListVariantsRequest,
    ) -> Result<pb::ListVariantsResponse, ApiError> {
        let variants = self.app.registry().list();
        Ok(pb::ListVariantsResponse {
            variants: variants.iter().map(wire::variant::variant).collect(),
        })
    }

    async fn state(
        &self,
        caller: Caller,
        req: pb::GetStateRequest,
    ) -> Result<pb::GetStateResponse, ApiError> {
        let games = self.app.games();
        let (game, viewer) = access::authorize(games, &caller, &req.game_id).await?;
        let live = games.current(&game).await?;
        Ok(wire::state(live.game(), &live.record, viewer))
    }

    async fn watch(
        &self,
        caller: Caller,
        req: pb::WatchGameRequest,
    ) -> Result<EventStream, ApiError> {
        watch::open(Arc::clone(&self.app), caller, req).await
    }

    async fn hints(
        &self,
        caller: Caller,
        req: pb::GetHintsRequest,
    ) -> Result<pb::GetHintsResponse, ApiError> {
        let games = self.app.games();
        let (game, p) = self
            .seat(&caller, &req.game_id, "hints need a seat token")
            .await?;
        let h = games.current(&game).await?.hints(p)?;
        let mut resp = wire::hints(&h.plays, h.can_pass, h.your_turn);
        if req.suggest && h.your_turn {
            let play = bots::suggest(games, &game, p).await?;
            resp.suggested = Some(wire::view::suggested(play, games.auto_bot().name));
        }
        Ok(resp)
    }

    async fn leave(
        &self,
        caller: Caller,
        req: pb::LeaveGameRequest,
    ) -> Result<pb::LeaveGameResponse, ApiError> {
        let games = self.app.games();
        let (game, p) = self
            .seat(&caller, &req.game_id, "leaving needs a seat token")
            .await?;
        let mut live = games.current(&game).await?;
        let now = now_ms();
        let submitted = games.commit(&mut live, |l| l.prepare_leave(p, now)).await?;
        Ok(wire::leave_response(respond(&live, submitted.seq, p)?))
    }

    async fn replay(
        &self,
        caller: Caller,
        req: pb::GetReplayRequest,
    ) -> Result<pb::GetReplayResponse, ApiError> {
        if req.game_id.is_empty() {
            return Err(ApiError::new(Reason::BadRequest, "game_id is required"));
        }
        let games = self.app.games();
        let game = games.load(&req.game_id).await?;
        let live = games.current(&game).await?;
        // A platform key sees its own games only: another platform's game answers exactly as a
        // game that does not exist.
        if let Caller::Platform(p) = &caller {
            if live.record.platform.as_deref() != Some(p.as_str()) {
                return Err(ApiError::new(
                    Reason::NoSuchGame,
                    format!("no game {}", req.game_id),
                ));
            }
        }
        if !live.finished() && caller != Caller::Admin {
            return Err(ApiError::new(
                Reason::GameInProgress,
                "the replay (with the seed) is available when the match is over",
            ));
        }
        Ok(pb::GetReplayResponse::from(&live.replay()?))
    }

    async fn create(
        &self,
        caller: Caller,
        req: pb::CreateGameRequest,
    ) -> Result<pb::CreateGameResponse, ApiError> {
        let app = &self.app;
        let platform = access::creator(app.keys(), &caller)?;
        let admin = caller == Caller::Admin || app.keys().open();
        if app.draining() {
            return Err(ApiError::new(
                Reason::Unavailable,
                "the server is shutting down",
            ));
        }
        if app.games().full() {
            return Err(ApiError::new(
                Reason::LimitExceeded,
                format!(
                    "this process holds its maximum of {} games",
                    app.config().max_games
                ),
            ));
        }
        let req = wire::new_game(req);
        let compiled = app.registry().active(&req.variant).ok_or_else(|| {
            ApiError::new(
                Reason::UnknownVariant,
                format!(
                    "no variant {:?} (known: {})",
                    req.variant,
                    app.registry().ids().join(", ")
                ),
            )
        })?;
        if (!req.seed.is_empty() || req.preset_hands.is_some()) && !admin {
            return Err(ApiError::new(
                Reason::PermissionDenied,
                "seed and preset_hands are admin-only",
            ));
        }
        let game_id = match req.request_id.is_empty() {
            true => auth::random_id()?,
            // An idempotent create derives its id from the platform and the request id.
            false => auth::derived_id(app.token_key(), platform.as_deref(), &req.request_id),
        };
        let (record, tokens) = Record::new(
            &compiled,
            &req,
            platform,
            &game_id,
            app.token_key(),
            now_ms(),
        )?;
        let request_id = (!req.request_id.is_empty()).then(|| req.request_id.clone());
        match app.games().create(record.clone(), request_id).await? {
            Created::New => Ok(wire::created(&tokens, &record)),
            Created::Existing(existing) => {
                // The same request again: the same game and the same (derived) tokens.
                let game = app.games().load(&existing).await?;
                let live = game.lock().await;
                let again = live.record.tokens_again(app.token_key())?;
                Ok(wire::created(&again, &live.record))
            }
        }
    }

    async fn submit(
        &self,
        caller: Caller,
        req: pb::SubmitPlayRequest,
    ) -> Result<pb::SubmitPlayResponse, ApiError> {
        let games = self.app.games();
        let (game, player) = self
            .seat(&caller, &req.game_id, "playing needs a seat token")
            .await?;
        if req.seat != u32::from(player) {
            return Err(ApiError::new(
                Reason::PermissionDenied,
                format!("the token is for player {player}, not {}", req.seat),
            ));
        }
        let action = wire::action(&req)?;
        if self.app.draining() {
            return Err(ApiError::new(
                Reason::Unavailable,
                "the server is shutting down; retry elsewhere",
            ));
        }
        // The one read of the store for this play (shared stores): the idempotency check and
        // the commit both act on this state.
        let mut live = games.current(&game).await?;
        let rid = (!req.request_id.is_empty()).then_some(req.request_id.as_str());
        if let Some(seq) = rid.and_then(|r| live.request_seq(player, r)) {
            return respond(&live, seq, player);
        }
        let now = now_ms();
        let expected = req.expected_seq;
        // `expected_seq` is checked inside the commit, against the state it acts on (after
        // catching up with other replicas), so a request that lost a race is STALE_SEQ, never
        // judged on a newer state (NOT_YOUR_TURN…).
        let committed = games
            .commit(&mut live, |l| {
                if expected != 0 && expected != l.seq() {
                    return Err(ApiError::new(
                        Reason::StaleSeq,
                        format!("expected seq {expected} but the game is at {}", l.seq()),
                    )
                    .with("current_seq", l.seq().to_string()));
                }
                l.prepare(player, action, now, rid)
            })
            .await;
        match committed {
            Ok(submitted) => respond(&live, submitted.seq, player),
            // The same request, applied meanwhile by another replica (a retry racing its
            // original): the original result.
            Err(e) => match rid.and_then(|r| live.request_seq(player, r)) {
                Some(seq) => respond(&live, seq, player),
                None => Err(e),
            },
        }
    }
}

/// The SubmitPlay response for the action at `seq`, as `player` sees it.
fn respond(live: &Session, seq: u64, player: u8) -> Result<pb::SubmitPlayResponse, ApiError> {
    let (at, events) = live.action_at(seq)?;
    Ok(wire::submit_response(live.game(), seq, at, events, player))
}
