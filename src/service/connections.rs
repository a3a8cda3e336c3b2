//! Serving a listener's connections on hyper: HTTP/2 (gRPC) and HTTP/1.1 (gRPC-Web, the web
//! table's assets) on one port, each connection in its own task, until a shutdown future
//! resolves; then a graceful drain: the listener closes, every connection is asked to finish
//! (HTTP/2 GOAWAY: calls in flight run to their end, no new one starts) and `serve` returns once
//! the last one has closed.
//!
//! It does what tonic's `Server` builder did for `server` and `web` (TCP_NODELAY on every
//! accepted connection, the per-connection concurrency limit, load shedding, the request
//! deadline, tonic's status for a layer's error, the peer's address in the request's
//! extensions, the same HTTP/2 settings), plus what that builder does not expose: the HTTP/2
//! send buffer of a stream (`--http2-send-buffer-bytes`). hyper's h2 takes body data from a
//! stream while its buffer has room (up to the client's flow-control window): without a bound of
//! our own a WatchGame stream whose client does not read keeps up to h2's default, 400 KiB, of
//! encoded events on the server (issue 21).

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_stream::StreamExt;
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Body as HttpBody, Bytes};
use tonic::service::RecoverErrorLayer;
use tonic::transport::server::{Connected, TcpIncoming};
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::{Service, ServiceBuilder, ServiceExt};

use super::grpc_timeout::GrpcTimeout;
use crate::config::ServeConfig;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// HTTP/2's keepalive ping timeout (tonic's default; no ping is sent: no interval is set).
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How connections are served.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionSettings {
    /// A request's deadline (until its response's headers), or the client's shorter one.
    pub request_timeout: Duration,
    /// Requests in progress at once on one connection.
    pub max_concurrent: usize,
    /// Beyond `max_concurrent`, refuse at once (UNAVAILABLE) instead of queueing.
    pub load_shed: bool,
    /// The most bytes of a response body HTTP/2 buffers for one stream beyond what the socket
    /// took (hyper's `max_send_buf_size`).
    pub http2_send_buffer_bytes: usize,
}

impl ConnectionSettings {
    /// The settings of the `serve` flags; `load_shed` as given.
    pub fn of(config: &ServeConfig, load_shed: bool) -> ConnectionSettings {
        ConnectionSettings {
            request_timeout: Duration::from_millis(config.request_timeout_ms),
            max_concurrent: config.max_concurrent,
            load_shed,
            http2_send_buffer_bytes: config.http2_send_buffer_bytes,
        }
    }
}

/// The connection builder: HTTP/1.1 and HTTP/2 (by the connection's preface), with tonic's
/// HTTP/2 settings (hyper's defaults but for no stream limit and no local-reset limit, as tonic
/// passes `None` for both) and the send buffer of `settings`.
fn builder(settings: &ConnectionSettings) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http2()
        .timer(TokioTimer::new())
        .initial_connection_window_size(None)
        .initial_stream_window_size(None)
        .max_concurrent_streams(None)
        .keep_alive_interval(None)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .adaptive_window(false)
        .max_pending_accept_reset_streams(None)
        .max_local_error_reset_streams(None)
        .max_frame_size(None)
        .max_send_buf_size(settings.http2_send_buffer_bytes);
    builder
}

/// Serves `service` on the connections of `listener` until `shutdown` resolves, then drains
/// (see the module's documentation).
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    settings: ConnectionSettings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), String>
where
    S: Service<Request<Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError> + Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let builder = builder(&settings);
    let graceful = GracefulShutdown::new();
    let mut shutdown = pin!(shutdown);
    {
        // The listener closes at the end of this block.
        let mut incoming = pin!(TcpIncoming::from(listener).with_nodelay(Some(true)));
        loop {
            let io = tokio::select! {
                () = &mut shutdown => break,
                io = incoming.next() => io,
            };
            let io = match io {
                Some(Ok(io)) => io,
                Some(Err(e)) => {
                    tracing::trace!(error = %e, "error accepting a connection");
                    continue;
                }
                None => break,
            };
            let info = io.connect_info();
            // Each connection its own limit (its clones, one per request, share the semaphore).
            let per_connection = ServiceBuilder::new()
                .layer(RecoverErrorLayer::new())
                .option_layer(settings.load_shed.then(LoadShedLayer::new))
                .layer(ConcurrencyLimitLayer::new(settings.max_concurrent))
                .layer_fn(|inner| GrpcTimeout::new(inner, Some(settings.request_timeout)))
                .service(service.clone())
                .map_request(move |req: Request<Incoming>| {
                    let mut req = req.map(Body::new);
                    req.extensions_mut().insert(info.clone());
                    req
                })
                .map_response(|res| res.map(Body::new));
            let hyper_service = TowerToHyperService::new(per_connection);
            let builder = builder.clone();
            let watcher = graceful.watcher();
            tokio::spawn(async move {
                let connection = builder.serve_connection(TokioIo::new(io), hyper_service);
                if let Err(e) = watcher.watch(connection).await {
                    tracing::debug!(error = %e, "failed serving a connection");
                }
            });
        }
    }
    // The connections finish what they have in flight (HTTP/2: GOAWAY; idle HTTP/1.1: closed).
    graceful.shutdown().await;
    Ok(())
}
