//! What an idempotent request is keyed and compared by: the idempotency key's bound, the
//! request's digest, and the refusal of a key reused for another request.

use sha2::{Digest, Sha256};

use super::bad;
use crate::service::status::{ApiError, Reason};

/// Longest idempotency key accepted (bytes): a key is stored with what it caused.
pub const MAX_REQUEST_ID_BYTES: usize = 128;

/// Checks an idempotency key's length.
pub fn check_request_id(request_id: &str) -> Result<(), ApiError> {
    at_most_bytes(request_id, MAX_REQUEST_ID_BYTES, |n| {
        format!("request_id is {n} bytes; at most {MAX_REQUEST_ID_BYTES}")
    })
}

/// Refuses a request's text longer than `max` bytes: BAD_REQUEST with `message` of its length.
pub(super) fn at_most_bytes(
    text: &str,
    max: usize,
    message: impl FnOnce(usize) -> String,
) -> Result<(), ApiError> {
    if text.len() > max {
        return Err(bad(Reason::BadRequest, message(text.len())));
    }
    Ok(())
}

/// The digest of a request for its idempotency key: hex SHA-256 over its parts, each
/// length-prefixed (so no two different part lists share a digest).
pub fn request_digest(parts: &[&[u8]]) -> String {
    let mut d = RequestDigest::default();
    for p in parts {
        d.part(p.len(), [*p]);
    }
    d.finish()
}

/// [`request_digest`] fed a part at a time, each part given as its length and its pieces, so a
/// caller hashes what it has without building each part first.
#[derive(Default)]
pub struct RequestDigest(Sha256);

impl RequestDigest {
    /// Adds a part of `len` bytes made of `pieces` (their lengths must add up to `len`).
    pub fn part<'a>(&mut self, len: usize, pieces: impl IntoIterator<Item = &'a [u8]>) {
        self.0.update((len as u64).to_le_bytes());
        for piece in pieces {
            self.0.update(piece);
        }
    }

    /// The digest (hex of the first 16 bytes of the SHA-256).
    pub fn finish(self) -> String {
        hex::encode(&self.0.finalize()[..16])
    }
}

/// The rejection of an idempotency key reused for another request.
pub fn idempotency_conflict(request_id_len: usize, what: &str) -> ApiError {
    bad(
        Reason::IdempotencyConflict,
        format!(
            "this request_id ({request_id_len} bytes) was already used for a different {what}; \
             the first request's result stands (use a new request_id for a new request)"
        ),
    )
}
