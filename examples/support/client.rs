//! Client helpers of the service measurements in `examples/` (`timer_lateness`, `match_latency`):
//! connections, a bearer token on a request, an rpc error as text, and the quantiles printed.

use std::time::Duration;

use tonic::Request;
use tonic::transport::{Channel, Endpoint};

/// `n` HTTP/2 connections to `addr` (`host:port`).
pub async fn connect(addr: &str, n: usize) -> Result<Vec<Channel>, String> {
    let mut channels = Vec::with_capacity(n);
    for _ in 0..n.max(1) {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| format!("bad address {addr}: {e}"))?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60))
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
        channels.push(channel);
    }
    Ok(channels)
}

/// A request carrying `token` (a seat token or a key) as its bearer credential.
pub fn authed<T>(msg: T, token: &str) -> Request<T> {
    let mut r = Request::new(msg);
    if let Ok(v) = format!("Bearer {token}").parse() {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

/// A failed rpc as text: its code and message.
pub fn status(e: tonic::Status) -> String {
    format!("{:?}: {}", e.code(), e.message())
}

/// The nearest-rank quantile `q` of sorted values (NaN when there are none).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// Count, p50, p90, p99 and max of the values (sorted in place), rounded to 0.01.
pub fn summary(values: &mut [f64]) -> serde_json::Value {
    values.sort_by(f64::total_cmp);
    let r = |x: f64| (x * 100.0).round() / 100.0;
    serde_json::json!({
        "count": values.len(),
        "p50": r(quantile(values, 0.50)),
        "p90": r(quantile(values, 0.90)),
        "p99": r(quantile(values, 0.99)),
        "max": r(values.last().copied().unwrap_or(f64::NAN)),
    })
}
