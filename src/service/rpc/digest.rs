//! What an idempotent action's request is compared by: the digest a new action records, and
//! whether a digest already stored (in the backlog or the store's log) is that of the same
//! request, so that a reused idempotency key with another body is refused.
//!
//! Two formats are stored, told apart by a prefix. SubmitPlay's digests are now XXH3-128
//! (`x3:` and 32 hex digits): the idempotency key's owner is the only one a collision could
//! harm, so no cryptographic strength is needed, and XXH3 is a specified algorithm whose output
//! does not depend on the build or platform. Digests stored by earlier servers (and every other
//! rpc's) are SHA-256 ([`request_digest`]: 32 hex digits, no prefix); a SubmitPlay compared with
//! one of those computes its SHA-256 digest then, and only then. Both formats hash the same
//! parts, length-prefixed: `[kind, card ids (u32 LE each), "type:key" or "", expected_seq in
//! decimal or "-"]`, each hashed as it is read (no part is built first).
//!
//! Depends on `record` (the SHA-256 digest) and `wire` (the parsed action).
//!
//! [`request_digest`]: crate::service::record::request_digest

use xxhash_rust::xxh3::Xxh3;

use crate::determinism::{decimal, prefixed_hex};
use crate::service::record::RequestDigest;
use crate::service::wire;

/// The prefix of a SubmitPlay digest in the XXH3-128 format.
pub const XXH3_PREFIX: &str = "x3:";

/// A request as its idempotency key is checked against an earlier one.
pub struct Body {
    /// The digest a new action records.
    recorded: String,
    /// A SubmitPlay's action and `expected_seq`, for a stored digest of the SHA-256 format.
    submit: Option<(wire::Action, Option<u64>)>,
}

impl Body {
    /// A SubmitPlay of `action` with this `expected_seq` (not its optional `seat`: the token's
    /// player either way).
    pub fn submit(action: wire::Action, expected: Option<u64>) -> Body {
        let mut d = Xxh3Parts(Xxh3::new());
        feed(&mut d, &action, expected);
        let recorded = prefixed_hex(XXH3_PREFIX, &d.0.digest128().to_be_bytes());
        Body {
            recorded,
            submit: Some((action, expected)),
        }
    }

    /// A request of another rpc, by its SHA-256 digest (`record::request_digest`).
    pub fn sha256(digest: String) -> Body {
        Body {
            recorded: digest,
            submit: None,
        }
    }

    /// The digest a new action records.
    pub fn recorded(&self) -> &str {
        &self.recorded
    }

    /// True if `stored` is this request's digest, in whichever format it was stored.
    pub fn is(&self, stored: &str) -> bool {
        match self.submit {
            Some((action, expected)) if !stored.starts_with(XXH3_PREFIX) => {
                stored == sha256_submit(&action, expected)
            }
            _ => stored == self.recorded,
        }
    }
}

/// A SubmitPlay's digest in the SHA-256 format, as servers before the XXH3 format stored it.
pub fn sha256_submit(action: &wire::Action, expected: Option<u64>) -> String {
    let mut d = RequestDigest::default();
    feed(&mut d, action, expected);
    d.finish()
}

/// A hash fed length-prefixed parts, each given as its length and its pieces.
trait Parts {
    /// Adds a part of `len` bytes made of `pieces` (their lengths must add up to `len`).
    fn part<'a>(&mut self, len: usize, pieces: impl IntoIterator<Item = &'a [u8]>);
}

impl Parts for RequestDigest {
    fn part<'a>(&mut self, len: usize, pieces: impl IntoIterator<Item = &'a [u8]>) {
        RequestDigest::part(self, len, pieces);
    }
}

/// XXH3-128 over the parts, framed as [`RequestDigest`] frames them (the length as u64 LE).
struct Xxh3Parts(Xxh3);

impl Parts for Xxh3Parts {
    fn part<'a>(&mut self, len: usize, pieces: impl IntoIterator<Item = &'a [u8]>) {
        self.0.update(&(len as u64).to_le_bytes());
        for piece in pieces {
            self.0.update(piece);
        }
    }
}

/// Feeds a SubmitPlay's parts to `d` (the module comment lists them).
fn feed(d: &mut impl Parts, action: &wire::Action, expected: Option<u64>) {
    match action {
        wire::Action::Pass => {
            d.part(4, [b"pass".as_slice()]);
            d.part(0, []);
            d.part(0, []);
        }
        wire::Action::Play { cards, declared } => {
            d.part(4, [b"play".as_slice()]);
            // A card set holds at most 128 cards: their ids on the stack, not in a Vec.
            let mut ids = [0u8; 4 * 128];
            for (slot, c) in ids.chunks_exact_mut(4).zip(cards.iter()) {
                slot.copy_from_slice(&c.id().to_le_bytes());
            }
            let ids = &ids[..4 * cards.len()];
            d.part(ids.len(), [ids]);
            match declared {
                Some(dec) => {
                    let (name, key) = (dec.kind.name(), dec.key.map(|k| k.symbol()).unwrap_or(""));
                    let pieces = [name.as_bytes(), b":", key.as_bytes()];
                    d.part(name.len() + 1 + key.len(), pieces);
                }
                None => d.part(0, []),
            }
        }
    }
    match expected {
        Some(e) => {
            let mut buf = [0u8; 20];
            let text = decimal(e, &mut buf);
            d.part(text.len(), [text]);
        }
        None => d.part(1, [b"-".as_slice()]),
    }
}

#[cfg(test)]
mod tests;
