//! The web table: the single-page app of `web/` (its built assets, `web/dist`, embedded in the
//! binary, so neither `cargo build` nor `serve` needs Node) served on its own address
//! (`--web-listen`, default `0.0.0.0:8080`), together with the game service over gRPC-Web on the
//! same origin: the page calls `/shuangkou.v1.GameEngine/…` where it was loaded from, so it needs
//! no CORS and works behind any host name or proxy that forwards the one port.
//!
//! Assets: `index.html` is revalidated on every load (`no-cache`); the bundle's files carry a
//! content hash in their names and are cached for a year (`immutable`). Where the build wrote a
//! gzip copy (`name.gz`) and the browser accepts gzip, that copy is sent.
//!
//! The listener stops with the gRPC one: when the drain closes the WatchGame streams.

use std::net::SocketAddr;
use std::sync::Arc;

use include_dir::{Dir, include_dir};
use tokio::net::TcpListener;
use tonic::codegen::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use tonic::service::Routes;

use super::app::App;
use super::connections::{self, ConnectionSettings};
use super::rpc;

/// The built single-page app (`npm run build` in `web/` writes it; CI checks it is current).
static DIST: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/web/dist");

/// Binds the web address and serves it in the background until the streams close (drain).
///
/// The game service does not depend on the page: when the address cannot be bound (another
/// server of the machine holds it, as when tests run several), the error is logged and the
/// service runs without the web table.
pub async fn start(app: &Arc<App>, addr: SocketAddr) {
    let listener = match TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(
                addr = %addr,
                error = %e,
                "web table not served: cannot listen (--web-listen to move it, --no-web to turn it off)"
            );
            return;
        }
    };
    let local = listener.local_addr().unwrap_or(addr);
    tracing::info!(addr = %local, "web table on http://{}/", display_host(local));
    let app = Arc::clone(app);
    tokio::spawn(async move {
        if let Err(e) = serve(app, listener).await {
            tracing::error!(error = %e, "web table stopped");
        }
    });
}

/// The address to print: a wildcard listen address is opened as localhost.
fn display_host(addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("localhost:{}", addr.port())
    } else {
        addr.to_string()
    }
}

/// Serves the assets and the game services (gRPC-Web, and plain gRPC) on `listener`.
pub async fn serve(app: Arc<App>, listener: TcpListener) -> Result<(), String> {
    let config = app.config().clone();
    let (game, _admin) = rpc::services(&app, config.max_message_bytes);
    let shengji = rpc::shengji::service(&app, config.max_message_bytes);
    // gRPC-Web translation for the services' routes only (shuangkou.v1 and shengji.v1): tonic-web
    // answers 400 to any other HTTP/1.1 request, and the assets are plain HTTP/1.1 GETs.
    let router = Routes::new(game)
        .add_service(shengji)
        .into_axum_router()
        .layer(tonic_web::GrpcWebLayer::new())
        .fallback(asset);
    let mut closing = app.streams_closing();
    let settings = ConnectionSettings::of(&config, false);
    connections::serve(
        listener,
        Routes::from(router).prepare(),
        settings,
        async move {
            let _ = closing.wait_for(|closed| *closed).await;
        },
    )
    .await
    .map_err(|e| format!("web server: {e}"))
}

/// One embedded file (or 404), with its content type and cache policy.
async fn asset(uri: Uri, request_headers: HeaderMap) -> (StatusCode, HeaderMap, &'static [u8]) {
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html",
        p => p,
    };
    let Some(file) = DIST.get_file(path) else {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        return (StatusCode::NOT_FOUND, headers, b"not found\n");
    };
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(path)),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control(path)),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let gzip = accepts_gzip(&request_headers)
        .then(|| DIST.get_file(format!("{path}.gz")))
        .flatten();
    match gzip {
        Some(gz) => {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            (StatusCode::OK, headers, gz.contents())
        }
        None => (StatusCode::OK, headers, file.contents()),
    }
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
            name.eq_ignore_ascii_case("gzip") && !refused
        })
}

/// The media type of an asset, by its extension.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" | "map" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Files under `assets/` carry a content hash in their names: cached for good. The rest
/// (`index.html`) is revalidated on every load, so a new binary's page is picked up at once.
fn cache_control(path: &str) -> &'static str {
    if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_and_cache_policy() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("assets/app-1A2B.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type("assets/app-1A2B.css"),
            "text/css; charset=utf-8"
        );
        assert_eq!(
            cache_control("assets/app-1A2B.js"),
            "public, max-age=31536000, immutable"
        );
        assert_eq!(cache_control("index.html"), "no-cache");
    }

    #[test]
    fn gzip_only_when_accepted() {
        let mut h = HeaderMap::new();
        assert!(!accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br"),
        );
        assert!(accepts_gzip(&h));
        h.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("br, gzip;q=0"),
        );
        assert!(!accepts_gzip(&h));
    }

    #[test]
    fn the_embedded_bundle_has_its_page_and_hashed_assets() {
        let index = DIST
            .get_file("index.html")
            .expect("web/dist/index.html embedded");
        let html = std::str::from_utf8(index.contents()).expect("utf-8 page");
        let assets: Vec<&str> = html
            .split('"')
            .filter(|s| s.starts_with("/assets/"))
            .collect();
        assert!(!assets.is_empty(), "the page links its bundle");
        for a in assets {
            assert!(DIST.get_file(&a[1..]).is_some(), "{a} is embedded");
        }
    }
}
