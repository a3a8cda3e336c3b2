//! The rpcs: thin tonic services over `access`, `games`, `session` and `wire`.
//!
//! Every unary rpc (and the opening of a WatchGame stream) goes through [`unary`], the one
//! place of the shared prologue and epilogue: the caller from the bearer credential, a debug
//! tracing span (disabled, and free, at the default `info` level), the rpc's duration and code in
//! metrics, the rejection counted by reason, and the [`ApiError`] turned into a gRPC status.
//!
//! - [`game`]: the `GameEngine` service; [`watch`]: its WatchGame stream; [`retry`]: retries of
//!   actions older than a game's backlog; [`digest`]: what a retry is compared by;
//! - [`wakeup`]: what a WatchGame stream of either game waits for between batches;
//! - [`admin`]: the `VariantAdmin` service;
//! - [`limit`]: requests over the message size limit as RESOURCE_EXHAUSTED/LIMIT_EXCEEDED.
//!
//! The top of the service's dependencies: nothing else in the service imports these modules
//! but `server`.

/// Implements a tonic service trait whose every rpc is [`unary_in`] over a handler function of the
/// module: `rpc(Request) -> Response = "Method" => handler;`, where
/// `handler(Call, Request) -> Result<Response, ApiError>`. The request and response
/// types are those of the `pb` module in scope where it is used; `status = f` names the API's
/// status of a rejection (default: `shuangkou.v1`'s). Extra trait items (stream types) go in the
/// braces after the trait.
macro_rules! rpcs {
    ($tr:path => $ty:ty { $($extra:tt)* } $($rest:tt)*) => {
        rpcs!($tr => $ty, status = tonic::Status::from, { $($extra)* } $($rest)*);
    };
    ($tr:path => $ty:ty, status = $status:expr, { $($extra:tt)* } $($rest:tt)*) => {
        rpcs!($tr => $ty, status = $status, client = [none], { $($extra)* } $($rest)*);
    };
    ($tr:path => $ty:ty, status = $status:expr, client = $client:tt, { $($extra:tt)* }
     $($rpc:ident($req:ident) -> $resp:ident = $method:literal => $handler:ident;)*) => {
        #[tonic::async_trait]
        impl $tr for $ty {
            $($extra)*
            $(
                async fn $rpc(
                    &self,
                    request: tonic::Request<pb::$req>,
                ) -> Result<tonic::Response<rpcs!(@resp $resp)>, tonic::Status> {
                    rpcs!(@forward $client, self, request, $rpc, $resp, $status);
                    crate::service::rpc::unary_in(
                        &self.app,
                        $method,
                        request,
                        |caller, req| {
                            $handler(crate::service::rpc::Call { app: &self.app, caller }, req)
                        },
                        $status,
                    )
                    .await
                }
            )*
        }
    };
    (@resp WatchGameStream) => { Self::WatchGameStream };
    (@resp $resp:ident) => { pb::$resp };
    // A service whose rpcs are never forwarded (the admin service).
    (@forward [none], $self:ident, $request:ident, $rpc:ident, $resp:ident, $status:expr) => {};
    // Forwarded to the game's owner when another replica owns it (`forward`).
    (@forward [$($client:tt)*], $self:ident, $request:ident, $rpc:ident, $resp:ident, $status:expr) => {
        let $request = match crate::service::rpc::forward::route(&$self.app, $request) {
            Ok(crate::service::rpc::forward::Routed::Here(r)) => r,
            Ok(crate::service::rpc::forward::Routed::There(channel, r)) => {
                let limit = $self.app.config().max_message_bytes;
                let mut client = pb::$($client)*::new(channel)
                    .max_decoding_message_size(limit)
                    .max_encoding_message_size(limit);
                let answer = crate::service::rpc::forward::answer(client.$rpc(r).await, $status);
                return rpcs!(@forwarded $resp, $self, answer, $status);
            }
            Err(e) => {
                crate::metrics::rejection(e.reason.name());
                return Err(($status)(e));
            }
        };
    };
    (@forwarded WatchGameStream, $self:ident, $answer:ident, $status:expr) => {
        $answer.map(|r| {
            r.map(|s| crate::service::rpc::forward::stream(&$self.app, s, $status))
        })
    };
    (@forwarded $resp:ident, $self:ident, $answer:ident, $status:expr) => { $answer };
}

pub mod admin;
pub mod digest;
pub mod forward;
pub mod game;
pub mod limit;
pub mod retry;
pub mod shengji;
pub mod wakeup;
pub mod watch;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tonic::{Request, Response, Status};
use tracing::Instrument;

use super::access::{self, Caller};
use super::app::App;
use super::clock::now_ms;
use super::games::{Games, LiveGame, Shared};
use super::pb;
use super::record::{Minting, Tokens};
use super::status::{ApiError, Reason};
use super::wire::bounds::Bounded;
use crate::store::Created;
use crate::variants::{Family, Registry};

/// The encoded descriptor set of `proto/` (for server reflection).
pub use super::pb::FILE_DESCRIPTOR_SET;

/// The two tonic services of the app, each with the message size limit both ways.
pub fn services(
    app: &Arc<App>,
    limit: usize,
) -> (
    pb::game_engine_server::GameEngineServer<game::GameApi>,
    pb::variant_admin_server::VariantAdminServer<admin::AdminApi>,
) {
    let game = pb::game_engine_server::GameEngineServer::new(game::GameApi::new(Arc::clone(app)))
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit);
    let admin =
        pb::variant_admin_server::VariantAdminServer::new(admin::AdminApi::new(Arc::clone(app)))
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit);
    (game, admin)
}

/// What every handler is given besides its request: the app it serves and who calls.
pub struct Call<'a> {
    pub app: &'a Arc<App>,
    pub caller: Caller,
}

impl Call<'_> {
    /// Refuses a caller without the admin key (anyone on a server without keys).
    fn admin(&self) -> Result<(), ApiError> {
        access::admin(self.app.keys(), &self.caller)
    }

    /// Refuses a move (both games' submit) while the server drains: UNAVAILABLE, which the
    /// client retries on another replica.
    fn refuse_while_draining(&self) -> Result<(), ApiError> {
        if self.app.draining() {
            return Err(ApiError::new(
                Reason::Unavailable,
                "the server is shutting down; retry elsewhere",
            ));
        }
        Ok(())
    }
}

/// The game a request is about, for its tracing span and its routing to the game's owner (""
/// when none).
pub trait Subject {
    fn game_id(&self) -> &str {
        ""
    }
    /// A CreateGame's request id and its family's id scope (`new_game_id`): an idempotent
    /// create goes to the owner of the id it derives.
    fn idempotent_create(&self) -> Option<(&str, &'static str)> {
        None
    }
}

macro_rules! about_a_game {
    ($($t:ty),*) => { $(impl Subject for $t { fn game_id(&self) -> &str { &self.game_id } })* };
}
about_a_game!(
    pb::SubmitPlayRequest,
    pb::GetStateRequest,
    pb::WatchGameRequest,
    pb::GetHintsRequest,
    pb::LeaveGameRequest,
    pb::GetReplayRequest,
    pb::AbortGameRequest
);
impl Subject for pb::ListVariantsRequest {}
impl Subject for pb::CreateGameRequest {
    fn idempotent_create(&self) -> Option<(&str, &'static str)> {
        Some((&self.request_id, ""))
    }
}
impl Subject for pb::ListGamesRequest {}
impl Subject for pb::ValidateVariantRequest {}
impl Subject for pb::ReloadVariantsRequest {}

/// The opening both games' CreateGame share: the creator (its platform; `None`: the admin key
/// or an open service) and whether it may use the admin-only fields (seed, preset cards);
/// refused while the server drains, or when `full` says why this process takes no more games.
fn may_create(
    app: &App,
    caller: &Caller,
    full: Option<String>,
) -> Result<(Option<String>, bool), ApiError> {
    let platform = access::creator(app.keys(), caller)?;
    let admin = *caller == Caller::Admin || app.keys().open();
    if app.draining() {
        return Err(ApiError::new(
            Reason::Unavailable,
            "the server is shutting down",
        ));
    }
    if let Some(why) = full {
        return Err(ApiError::new(Reason::LimitExceeded, why));
    }
    Ok((platform, admin))
}

/// The active version of variant `name` (`game` names the family in the refusal: "" or
/// "升級 "), or UNKNOWN_VARIANT naming the known ones.
fn active_variant<V: Family>(
    registry: &Registry<V>,
    name: &str,
    game: &str,
) -> Result<Arc<V>, ApiError> {
    registry.active(name).ok_or_else(|| {
        ApiError::new(
            Reason::UnknownVariant,
            format!(
                "no {game}variant {} (known: {})",
                super::status::clip(name),
                registry.ids().join(", ")
            ),
        )
    })
}

/// Refuses the admin-only fields of a CreateGame (`what`, `asked` for) to a caller that is not
/// the admin (an open service counts as the admin).
fn admin_only(asked: bool, admin: bool, what: &str) -> Result<(), ApiError> {
    if asked && !admin {
        return Err(ApiError::new(
            Reason::PermissionDenied,
            format!("{what} are admin-only"),
        ));
    }
    Ok(())
}

/// A new game's id: random, or, for an idempotent create, derived from the platform and the
/// request id (`scope` keeps the two games' ids apart: "" for Shuangkou, "shengji:" for 升級).
fn new_game_id(
    app: &App,
    platform: Option<&str>,
    request_id: &str,
    scope: &str,
) -> Result<String, ApiError> {
    if request_id.is_empty() {
        return random_owned_id(app);
    }
    Ok(super::auth::derived_id(
        app.token_key(),
        platform,
        &format!("{scope}{request_id}"),
    ))
}

/// A fresh random game id, in a shard this replica owns when it owns any (always, but on a
/// shared store): the new game is then this replica's. A replica that owns no shard yet (just
/// started, or cut off from the store) stores the game under any id without keeping it: its
/// owner loads it at its first request.
fn random_owned_id(app: &App) -> Result<String, ApiError> {
    let own = app.ownership();
    // One shard of 128 owned: 128 draws on average; 8,192 miss with probability e^-64.
    let draws = if own.owned_shards().is_empty() {
        1
    } else {
        8192
    };
    let mut id = super::auth::random_id()?;
    for _ in 1..draws {
        if own.owns_game(&id) {
            break;
        }
        id = super::auth::random_id()?;
    }
    Ok(id)
}

/// A CreateGame's outcome: a new game (its record and tokens), or the game the same
/// idempotent request created before.
enum Creation<G: LiveGame> {
    New(G::Record, Tokens),
    Existing(Shared<G>),
}

/// The end both games' CreateGame share: the new game's id (`new_game_id` in `scope`), its
/// record and tokens from `build(platform, game id, token key, now)`, stored; or the game the
/// same idempotent request (`request_id`) created before.
async fn create_game<G: LiveGame>(
    app: &App,
    games: &Games<G>,
    (platform, request_id, scope): (Option<String>, &str, &str),
    build: impl FnOnce(Minting<'_>) -> Result<(G::Record, Tokens), ApiError>,
) -> Result<Creation<G>, ApiError> {
    let game_id = new_game_id(app, platform.as_deref(), request_id, scope)?;
    let (record, tokens) = build(Minting {
        platform,
        game_id: &game_id,
        token_key: app.token_key(),
        now_ms: now_ms(),
    })?;
    let key = (!request_id.is_empty()).then(|| request_id.to_string());
    match games.create(record.clone(), key).await? {
        Created::New => Ok(Creation::New(record, tokens)),
        Created::Existing(existing) => games.load(&existing).await.map(Creation::Existing),
    }
}

/// A request's `expected_seq` (`None`: none sent) against the seq `at` of the game it acts on:
/// STALE_SEQ, with the `current_seq`, when they differ.
fn expect_seq(expected: Option<u64>, at: u64) -> Result<(), ApiError> {
    match expected {
        Some(expected) if expected != at => Err(ApiError::new(
            Reason::StaleSeq,
            format!("expected seq {expected} but the game is at {at}"),
        )
        .with("current_seq", at.to_string())),
        _ => Ok(()),
    }
}

/// The game a request names, loaded (from the cache, else rebuilt from the store), for
/// either family's GetReplay and AbortGame; an empty id is refused.
async fn named_game<G: LiveGame>(games: &Games<G>, game_id: &str) -> Result<Shared<G>, ApiError> {
    if game_id.is_empty() {
        return Err(ApiError::new(Reason::BadRequest, "game_id is required"));
    }
    games.load(game_id).await
}

/// GetReplay's game for either family: `game` (named `game_id`) caught up under its lock, once
/// `caller` may read its replay (`access::replay`).
async fn replayable<'a, G: LiveGame>(
    games: &Games<G>,
    game: &'a Shared<G>,
    caller: &Caller,
    game_id: &str,
) -> Result<tokio::sync::MutexGuard<'a, G>, ApiError> {
    let live = games.current(game).await?;
    let platform = live.record().platform.as_deref();
    access::replay(caller, platform, live.finished(), game_id)?;
    Ok(live)
}

/// Runs one rpc: the caller, a tracing span, metrics, and the status of a rejection.
pub async fn unary<Req, T, Fut>(
    app: &App,
    method: &'static str,
    request: Request<Req>,
    handle: impl FnOnce(Caller, Req) -> Fut,
) -> Result<Response<T>, Status>
where
    Req: Subject + Bounded,
    Fut: Future<Output = Result<T, ApiError>>,
{
    unary_in(app, method, request, handle, Status::from).await
}

/// [`unary`] with the API's own status of a rejection (`status`: `shengji.v1`'s names a 升級
/// rule). A request with a field over its bound (`wire::bounds`) is refused before its handler.
pub async fn unary_in<Req, T, Fut>(
    app: &App,
    method: &'static str,
    request: Request<Req>,
    handle: impl FnOnce(Caller, Req) -> Fut,
    status: fn(ApiError) -> Status,
) -> Result<Response<T>, Status>
where
    Req: Subject + Bounded,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let start = Instant::now();
    let caller = access::caller(app.keys(), request.metadata());
    let req = request.into_inner();
    let r = match req.bounds() {
        Ok(()) => {
            let span = tracing::debug_span!("rpc", method, game = %req.game_id());
            handle(caller, req).instrument(span).await
        }
        Err(e) => Err(e),
    };
    let code = match &r {
        Ok(_) => "OK",
        Err(e) => code_name(e.reason.code()),
    };
    crate::metrics::rpc(method, code, start.elapsed().as_secs_f64());
    r.map(Response::new).map_err(|e| {
        crate::metrics::rejection(e.reason.name());
        status(e)
    })
}

/// A rejection as a status, counted by reason.
pub fn rejected(e: ApiError) -> Status {
    crate::metrics::rejection(e.reason.name());
    Status::from(e)
}

fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_expected_seq_must_be_the_games_seq() {
        assert!(expect_seq(None, 5).is_ok(), "none sent: any seq");
        assert!(expect_seq(Some(5), 5).is_ok());
        let e = expect_seq(Some(4), 5).unwrap_err();
        assert_eq!(e.reason, Reason::StaleSeq);
        assert_eq!(e.message, "expected seq 4 but the game is at 5");
        let current = e.metadata.iter().find(|(k, _)| k == "current_seq");
        assert_eq!(current.map(|(_, v)| v.as_str()), Some("5"));
    }
}
