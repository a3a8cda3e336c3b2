//! Server wiring: the gRPC services, health, reflection, gRPC-Web, limits and graceful shutdown
//! (the connections themselves are served by `connections`).
//!
//! `run` is what `shuangkou serve` calls: configuration → tracing → metrics → the [`App`]
//! (store → variants → recovery, in `app`) → serve, until SIGTERM or SIGINT. `serve` takes a bound listener and a shutdown future, so
//! tests run servers on `127.0.0.1:0`.
//!
//! Shutdown (drain), in order: health turns NOT_SERVING for every service; after the drain delay
//! the listener stops accepting; in-flight calls finish (up to the drain timeout); WatchGame
//! streams end with UNAVAILABLE "server shutting down"; the store is flushed. A second signal
//! exits at once.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic_health::ServingStatus;
use tower::ServiceBuilder;

use super::app::App;
use super::connections::{self, ConnectionSettings};
use super::rpc;
use crate::config::{LogFormat, ServeConfig};

/// The service names reported by `grpc.health.v1.Health`.
pub const GAME_SERVICE: &str = "shuangkou.v1.GameEngine";
pub const ADMIN_SERVICE: &str = "shuangkou.v1.VariantAdmin";

/// Installs the tracing subscriber (text or JSON), once per process.
pub fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SHUANGKOU_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// `shuangkou serve`: runs the service until SIGTERM/SIGINT.
pub async fn run(config: ServeConfig) -> Result<(), String> {
    init_tracing(config.log_format);
    if !config.no_metrics {
        crate::metrics::install(config.metrics_listen)?;
        tracing::info!(addr = %config.metrics_listen, "metrics on /metrics");
    }
    let app = App::open(config.clone()).await?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(addr = %config.listen, store = app.store_kind().name(), "serving shuangkou.v1");
    if !config.no_web {
        super::web::start(&app, config.web_listen).await;
    }
    serve(app, listener, signal_received()).await
}

/// Resolves on the first SIGTERM or SIGINT; a second one exits the process at once.
async fn signal_received() {
    wait_signal().await;
    tracing::info!("shutdown signal: draining (a second signal exits at once)");
    tokio::spawn(async {
        wait_signal().await;
        tracing::warn!("second signal: exiting now");
        std::process::exit(130);
    });
}

async fn wait_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves on `listener` until `shutdown` resolves, then drains.
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    let config = app.config().clone();
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    for name in ["", GAME_SERVICE, ADMIN_SERVICE, rpc::shengji::SERVICE] {
        health_reporter
            .set_service_status(name, ServingStatus::Serving)
            .await;
    }
    let error_details = super::status::error_details_descriptors()?;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(rpc::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_file_descriptor_set(error_details.clone())
        .build_v1()
        .map_err(|e| format!("reflection: {e}"))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(rpc::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_file_descriptor_set(error_details)
        .build_v1alpha()
        .map_err(|e| format!("reflection: {e}"))?;

    let (game, admin) = rpc::services(&app, config.max_message_bytes);
    let shengji = rpc::shengji::service(&app, config.max_message_bytes);

    // Readiness follows the store: the game service (the readiness probe's) is NOT_SERVING while
    // the store is unreachable. The whole server (`""`, the liveness probe's) stays SERVING — a
    // restart would not bring the store back — and so does the admin service, which needs none.
    let watcher_app = Arc::clone(&app);
    let reporter = health_reporter.clone();
    let readiness = tokio::spawn(async move {
        let mut last = true;
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            if watcher_app.draining() {
                break;
            }
            let ok = watcher_app.store_ready().await;
            if ok != last {
                let status = if ok {
                    ServingStatus::Serving
                } else {
                    ServingStatus::NotServing
                };
                reporter.set_service_status(GAME_SERVICE, status).await;
                tracing::warn!(ready = ok, "store readiness changed");
                last = ok;
            }
        }
    });

    // Drain: health first, then stop accepting after the drain delay.
    let drain_app = Arc::clone(&app);
    let drain_reporter = health_reporter.clone();
    let delay = Duration::from_secs(config.drain_delay_seconds);
    let stop_accepting = async move {
        shutdown.await;
        drain_app.begin_drain();
        for name in ["", GAME_SERVICE, ADMIN_SERVICE, rpc::shengji::SERVICE] {
            drain_reporter
                .set_service_status(name, ServingStatus::NotServing)
                .await;
        }
        tokio::time::sleep(delay).await;
        drain_app.close_streams();
    };

    let timers = app.start_timers();
    let routes = Routes::new(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(game)
        .add_service(admin)
        .add_service(shengji)
        .prepare();
    let service = ServiceBuilder::new()
        .layer(tonic_web::GrpcWebLayer::new())
        .layer(rpc::limit::OversizeLayer)
        .service(routes);
    let settings = ConnectionSettings::of(&config, true);
    let server = connections::serve(listener, service, settings, stop_accepting);

    let drain = Duration::from_secs(config.drain_seconds + config.drain_delay_seconds);
    let result = server.await;
    // In-flight calls have finished (`connections::serve` waits for them); bound the rest of the
    // drain.
    let _ = tokio::time::timeout(drain, app.finish()).await;
    readiness.abort();
    timers.abort();
    // Awaited so that the schedule no longer holds the service (its store) once serve returns:
    // the data directory can be opened again at once.
    let _ = timers.await;
    tracing::info!("stopped");
    result
}
