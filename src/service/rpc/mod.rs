//! The rpcs: thin tonic services over `access`, `games`, `session` and `wire`.
//!
//! Every unary rpc (and the opening of a WatchGame stream) goes through [`unary`], the one
//! place of the shared prologue and epilogue: the caller from the bearer credential, a debug
//! tracing span (disabled, and free, at the default `info` level), the rpc's duration and code in
//! metrics, the rejection counted by reason, and the [`ApiError`] turned into a gRPC status.
//!
//! - [`game`]: the `GameEngine` service; [`watch`]: its WatchGame stream;
//! - [`admin`]: the `VariantAdmin` service.
//!
//! The top of the service's dependencies: nothing else in the service imports these modules
//! but `server`.

pub mod admin;
pub mod game;
pub mod watch;

use std::future::Future;
use std::time::Instant;

use tonic::{Request, Response, Status};
use tracing::Instrument;

use super::access::{self, Caller};
use super::app::App;
use super::pb;
use super::status::ApiError;

/// The game a request is about, for its tracing span ("" when none).
pub trait Subject {
    fn game_id(&self) -> &str {
        ""
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
    pb::GetReplayRequest
);
impl Subject for pb::ListVariantsRequest {}
impl Subject for pb::CreateGameRequest {}
impl Subject for pb::ValidateVariantRequest {}
impl Subject for pb::ReloadVariantsRequest {}

/// Runs one rpc: the caller, a tracing span, metrics, and the status of a rejection.
pub async fn unary<Req, T, Fut>(
    app: &App,
    method: &'static str,
    request: Request<Req>,
    handle: impl FnOnce(Caller, Req) -> Fut,
) -> Result<Response<T>, Status>
where
    Req: Subject,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let start = Instant::now();
    let caller = access::caller(app.keys(), request.metadata());
    let req = request.into_inner();
    let span = tracing::debug_span!("rpc", method, game = %req.game_id());
    let r = handle(caller, req).instrument(span).await;
    let code = match &r {
        Ok(_) => "OK",
        Err(e) => code_name(e.reason.code()),
    };
    crate::metrics::rpc(method, code, start.elapsed().as_secs_f64());
    r.map(Response::new).map_err(rejected)
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
