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

/// `n` HTTP/2 connections to `target` (host:port or a URI), requests spread over them.
pub async fn connect(target: &str, n: usize) -> Result<Vec<Channel>, String> {
    let uri = if target.contains("://") {
        target.to_string()
    } else {
        format!("http://{target}")
    };
    let mut channels = Vec::new();
    for _ in 0..n.max(1) {
        let ch = Endpoint::from_shared(uri.clone())
            .map_err(|e| format!("bad target {target}: {e}"))?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {target}: {e}"))?;
        channels.push(ch);
    }
    Ok(channels)
}
