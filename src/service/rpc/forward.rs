//! Requests reach the owner: a replica that does not own a game (`ownership`) forwards the rpc to
//! the replica that does, over gRPC to the address in its shard's lease, with the caller's
//! metadata as it came (authorization, request id, `grpc-timeout`) and a header that marks it
//! forwarded. Every rpc about one game is forwarded (WatchGame's stream is proxied: the owner
//! holds the player's presence); CreateGame with a `request_id` goes to the owner of the id it
//! derives, and without one is created here under a fresh id drawn in a shard owned here
//! (`rpc::new_game_id`).
//!
//! A forwarded request is served where it lands if that replica owns the game, else refused
//! (UNAVAILABLE): it never travels twice. An unknown owner (a lease lapsed, not yet taken) or an
//! unreachable one is UNAVAILABLE too, which clients retry (with their request id).
//!
//! One tonic channel per owner address for the whole process (HTTP/2 multiplexes the calls).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio_stream::{Stream, StreamExt};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use super::Subject;
use crate::service::access;
use crate::service::app::App;
use crate::service::ownership::Route;
use crate::service::status::{ApiError, Reason};

/// The header of a forwarded request.
pub const FORWARDED: &str = "x-shuangkou-forwarded";

/// How long connecting to an owner may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a request is served.
pub enum Routed<Req> {
    /// Here (owned here, not about one game, or a store not shared).
    Here(Request<Req>),
    /// At the owner, over this channel; the request is marked forwarded.
    There(Channel, Request<Req>),
}

/// Where `request` is to be served: here, at its game's owner, or nowhere now (UNAVAILABLE).
pub fn route<Req: Subject>(app: &App, request: Request<Req>) -> Result<Routed<Req>, ApiError> {
    let own = app.ownership();
    if !own.divided() {
        return Ok(Routed::Here(request));
    }
    let Some(id) = routing_id(app, &request) else {
        return Ok(Routed::Here(request));
    };
    let forwarded = request.metadata().contains_key(FORWARDED);
    match own.route(&id) {
        Route::Here => Ok(Routed::Here(request)),
        _ if forwarded => Err(unavailable(
            "the game moved while the request was forwarded; retry",
        )),
        Route::There(addr) => {
            let channel = channel(&addr)?;
            let mut request = request;
            request
                .metadata_mut()
                .insert(FORWARDED, tonic::metadata::MetadataValue::from_static("1"));
            Ok(Routed::There(channel, request))
        }
        Route::Unknown => Err(unavailable(
            "the game's owner is changing (a replica stopped); retry shortly",
        )),
    }
}

/// The game id a request is routed by: its game's, or the id an idempotent CreateGame derives.
fn routing_id<Req: Subject>(app: &App, request: &Request<Req>) -> Option<String> {
    let req = request.get_ref();
    if !req.game_id().is_empty() {
        return Some(req.game_id().to_string());
    }
    let (request_id, scope) = req.idempotent_create()?;
    if request_id.is_empty() {
        return None;
    }
    let caller = access::caller(app.keys(), request.metadata());
    // A caller who may not create is refused where it lands.
    let platform = access::creator(app.keys(), &caller).ok()?;
    super::new_game_id(app, platform.as_deref(), request_id, scope).ok()
}

fn unavailable(message: &str) -> ApiError {
    ApiError::new(Reason::Unavailable, message)
}

/// The process's channel to the replica at `addr` (made on first use, connected lazily).
fn channel(addr: &str) -> Result<Channel, ApiError> {
    static CHANNELS: OnceLock<Mutex<HashMap<String, Channel>>> = OnceLock::new();
    let map = CHANNELS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map
        .lock()
        .map_err(|_| unavailable("internal lock poisoned"))?;
    if let Some(c) = map.get(addr) {
        return Ok(c.clone());
    }
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| unavailable(&format!("the owner's address {addr:?} is not usable: {e}")))?
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true);
    let c = endpoint.connect_lazy();
    map.insert(addr.to_string(), c.clone());
    Ok(c)
}

/// The owner's answer as this replica's: its own statuses (with their ErrorInfo) pass unchanged;
/// a transport failure (the owner unreachable or gone mid-call) is a retryable UNAVAILABLE.
pub fn answer<T>(
    r: Result<tonic::Response<T>, Status>,
    status: fn(ApiError) -> Status,
) -> Result<tonic::Response<T>, Status> {
    r.map_err(|s| {
        if s.details().is_empty() && !s.metadata().contains_key("grpc-status-details-bin") {
            crate::metrics::rejection(Reason::Unavailable.name());
            status(unavailable(&format!(
                "the game's owner did not answer ({}); retry",
                s.message()
            )))
        } else {
            s
        }
    })
}

/// A proxied WatchGame stream: the owner's events as they come, until the owner's stream ends
/// (its end or its error passed on), the client goes away, or this replica drains (UNAVAILABLE:
/// resume from the last seq elsewhere). The owner holds the player's presence meanwhile.
pub fn stream<T: Send + 'static>(
    app: &App,
    mut upstream: tonic::Streaming<T>,
    status: fn(ApiError) -> Status,
) -> Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>> {
    let mut closing = app.streams_closing();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<T, Status>>(16);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                item = upstream.next() => match item {
                    None => return,
                    Some(Ok(event)) => {
                        if tx.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                    Some(Err(s)) => {
                        let s = answer::<()>(Err(s), status).err().unwrap_or_else(|| Status::unavailable("the owner's stream ended"));
                        let _ = tx.send(Err(s)).await;
                        return;
                    }
                },
                _ = async { closing.wait_for(|c| *c).await.is_ok() } => {
                    let e = unavailable("server shutting down; resume from your last seq elsewhere");
                    let _ = tx.send(Err(status(e))).await;
                    return;
                }
                _ = tx.closed() => return,
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}
