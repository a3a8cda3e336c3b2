//! Requests over the message size limit, answered as the contract says: RESOURCE_EXHAUSTED with
//! the LIMIT_EXCEEDED reason (and counted), instead of tonic's own OUT_OF_RANGE without a reason.
//!
//! tonic refuses such a request while decoding it, before any handler runs, and answers with a
//! trailers-only response carrying the `Status` in its extensions. [`OversizeLayer`] wraps the
//! server's routes and replaces exactly that status (OUT_OF_RANGE whose message is the decoder's
//! "decoded message length too large"); every other response passes through untouched. The
//! request was never decoded, so nothing acted on it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::codegen::Service;
use tonic::codegen::http;
use tonic::{Code, Status};

use crate::service::status::{ApiError, Reason};

/// The message of tonic's decoder when a request is over `max_decoding_message_size`.
const DECODER_TOO_LARGE: &str = "decoded message length too large";

/// The layer (for `Server::builder().layer`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OversizeLayer;

impl<S> tower_layer::Layer<S> for OversizeLayer {
    type Service = Oversize<S>;

    fn layer(&self, inner: S) -> Oversize<S> {
        Oversize { inner }
    }
}

/// The service of [`OversizeLayer`].
#[derive(Clone, Debug)]
pub struct Oversize<S> {
    inner: S,
}

/// The LIMIT_EXCEEDED status replacing tonic's decoding refusal, if `status` is one.
fn limit_exceeded(status: &Status) -> Option<Status> {
    if status.code() != Code::OutOfRange || !status.message().contains(DECODER_TOO_LARGE) {
        return None;
    }
    // tonic's message: "Error, decoded message length too large: found N bytes, the limit is:
    // M bytes".
    let detail = status
        .message()
        .split_once("too large: ")
        .map_or(status.message(), |(_, d)| d);
    Some(
        ApiError::new(
            Reason::LimitExceeded,
            format!("the request is over the message size limit ({detail})"),
        )
        .into(),
    )
}

impl<S, Req, B> Service<Req> for Oversize<S>
where
    S: Service<Req, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: Default,
{
    type Response = http::Response<B>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<B>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            match resp.extensions().get::<Status>().and_then(limit_exceeded) {
                Some(status) => {
                    crate::metrics::oversized();
                    crate::metrics::rejection(Reason::LimitExceeded.name());
                    Ok(status.into_http())
                }
                None => Ok(resp),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_decoders_size_refusal_is_replaced() {
        let tonic = Status::out_of_range(
            "Error, decoded message length too large: found 8200 bytes, the limit is: 4096 bytes",
        );
        let s = limit_exceeded(&tonic).expect("replaced");
        assert_eq!(s.code(), Code::ResourceExhausted);
        assert!(
            s.message().starts_with("LIMIT_EXCEEDED: "),
            "{}",
            s.message()
        );
        assert!(s.message().contains("found 8200 bytes"), "{}", s.message());
        assert!(limit_exceeded(&Status::out_of_range("another range")).is_none());
        assert!(limit_exceeded(&Status::internal(DECODER_TOO_LARGE)).is_none());
    }
}
