//! The deadline of a request: the shorter of the server's `--request-timeout-ms` and the client's
//! `grpc-timeout` header (gRPC over HTTP/2: at most 8 digits and a unit, `H` `M` `S` `m` `u` `n`).
//! Past it the call answers CANCELLED "Timeout expired" (tonic's [`TimeoutExpired`], turned into
//! that status by tonic's `RecoverErrorLayer` outside this one).
//!
//! What tonic's `Server::timeout` does; its layer is private to tonic's server, which
//! `connections` replaces (to set HTTP/2 options tonic's builder does not expose). The deadline
//! covers the handler until the response's headers, not a stream's body: a WatchGame stream
//! lives on after it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tonic::TimeoutExpired;
use tonic::codegen::Service;
use tonic::codegen::http::{HeaderMap, Request};

/// The header a gRPC client's deadline comes in.
const GRPC_TIMEOUT: &str = "grpc-timeout";

/// The client's deadline in `headers`, if it sent a well-formed one (a malformed one is ignored,
/// as tonic ignores it).
fn client_timeout(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(GRPC_TIMEOUT)?.to_str().ok()?;
    let unit_at = value.len().checked_sub(1)?;
    let (digits, unit) = (value.get(..unit_at)?, value.get(unit_at..)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// The deadline of a request with `headers` on a server whose own is `server`.
pub fn deadline(headers: &HeaderMap, server: Option<Duration>) -> Option<Duration> {
    match (client_timeout(headers), server) {
        (Some(c), Some(s)) => Some(c.min(s)),
        (c, s) => c.or(s),
    }
}

/// Bounds each request of the inner service by [`deadline`].
#[derive(Clone, Debug)]
pub struct GrpcTimeout<S> {
    inner: S,
    server: Option<Duration>,
}

impl<S> GrpcTimeout<S> {
    pub fn new(inner: S, server: Option<Duration>) -> Self {
        GrpcTimeout { inner, server }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> Service<Request<B>> for GrpcTimeout<S>
where
    S: Service<Request<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let deadline = deadline(req.headers(), self.server);
        let call = self.inner.call(req);
        Box::pin(async move {
            match deadline {
                Some(d) => match tokio::time::timeout(d, call).await {
                    Ok(answer) => answer.map_err(Into::into),
                    Err(_) => Err(TimeoutExpired(()).into()),
                },
                None => call.await.map_err(Into::into),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::codegen::http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(GRPC_TIMEOUT, HeaderValue::from_str(value).expect("header"));
        h
    }

    #[test]
    fn the_client_deadline_in_every_unit_and_the_shorter_one_wins() {
        let server = Some(Duration::from_secs(10));
        assert_eq!(deadline(&HeaderMap::new(), server), server);
        assert_eq!(deadline(&HeaderMap::new(), None), None);
        assert_eq!(deadline(&with("1H"), None), Some(Duration::from_secs(3600)));
        assert_eq!(deadline(&with("2M"), None), Some(Duration::from_secs(120)));
        assert_eq!(deadline(&with("3S"), server), Some(Duration::from_secs(3)));
        assert_eq!(
            deadline(&with("40m"), server),
            Some(Duration::from_millis(40))
        );
        assert_eq!(
            deadline(&with("5u"), server),
            Some(Duration::from_micros(5))
        );
        assert_eq!(deadline(&with("6n"), server), Some(Duration::from_nanos(6)));
        assert_eq!(
            deadline(&with("99S"), server),
            server,
            "the server's is shorter"
        );
    }

    #[test]
    fn a_malformed_client_deadline_is_ignored() {
        // No server deadline: any deadline read from the header would show.
        let server = None;
        for bad in ["", "S", "5", "5x", "123456789S", "-5S", "5 S", "五S"] {
            let headers = match HeaderValue::from_str(bad) {
                Ok(v) => {
                    let mut h = HeaderMap::new();
                    h.insert(GRPC_TIMEOUT, v);
                    h
                }
                Err(_) => continue,
            };
            assert_eq!(deadline(&headers, server), server, "{bad:?}");
        }
    }
}
