//! The connections to the server and the `authorization` metadata of a request.

use std::time::Duration;

use tonic::Request;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Channel, Endpoint};

/// `msg` as a request, with `auth` as its `authorization` header when given.
pub fn with_auth<T>(msg: T, auth: Option<&AsciiMetadataValue>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(a) = auth {
        r.metadata_mut().insert("authorization", a.clone());
    }
    r
}

/// `Bearer TOKEN` as metadata.
pub fn bearer(token: &str) -> Result<AsciiMetadataValue, String> {
    format!("Bearer {token}")
        .parse()
        .map_err(|_| "a token is not valid metadata".to_string())
}

/// `n` HTTP/2 connections to `target` (host:port or a URI), requests spread over them. A
/// comma-separated list of several replicas (`a,b,c`) spreads every request over all of them
/// (each channel balances per request over one connection per replica, as a Kubernetes Service
/// without session affinity would).
pub async fn connect(target: &str, n: usize) -> Result<Vec<Channel>, String> {
    let targets: Vec<&str> = target
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    if targets.is_empty() {
        return Err(format!("bad target {target:?}: no address"));
    }
    let mut channels = Vec::new();
    for _ in 0..n.max(1) {
        if let [one] = targets.as_slice() {
            let ch = endpoint(one)?
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {one}: {e}"))?;
            channels.push(ch);
            continue;
        }
        // Each replica answers before the run starts (a typo fails here, not mid-run).
        for t in &targets {
            endpoint(t)?
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {t}: {e}"))?;
        }
        let endpoints = targets
            .iter()
            .map(|t| endpoint(t))
            .collect::<Result<Vec<_>, _>>()?;
        channels.push(Channel::balance_list(endpoints.into_iter()));
    }
    Ok(channels)
}

/// The endpoint of one server address (host:port or a URI).
fn endpoint(target: &str) -> Result<Endpoint, String> {
    let uri = if target.contains("://") {
        target.to_string()
    } else {
        format!("http://{target}")
    };
    Ok(Endpoint::from_shared(uri)
        .map_err(|e| format!("bad target {target}: {e}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5)))
}
