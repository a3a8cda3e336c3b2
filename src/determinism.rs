//! Determinism shared by the game families (Shuangkou's `game`, 升級's `shengji`): the seeded
//! random stream of a deal, the state hash, and the replay of a log against recorded hashes.
//!
//! A deal's stream is ChaCha20 keyed by SHA-256 of (a domain label, the 256-bit game seed, the
//! deal number), so every deal of every game family draws from its own stream and a game is a
//! pure function of its seed and actions. A state hash is SHA-256 of a serde encoding of the
//! state, hex: postcard (its stable 1.x wire format) for every new game, JSON for Shuangkou games
//! recorded before the compact scheme.
//!
//! Also the two steps both families take the same way: the replay of a log, and a step that
//! may fail half-way run on a copy (check, then apply).
//!
//! Pure: depends on `rand_chacha`, `sha2`, `serde`, `postcard`, `serde_json`, `hex` and
//! `thiserror` only.

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;
use sha2::digest::core_api::CoreProxy;
use sha2::{Digest, Sha256};

/// The random stream of deal `deal_number` of a game seeded with `seed`, in the family `domain`
/// (e.g. `b"shuangkou-deal"`).
pub fn deal_stream(domain: &[u8], seed: &[u8; 32], deal_number: u32) -> ChaCha20Rng {
    let mut h = Sha256::new();
    h.update(domain);
    h.update(seed);
    h.update(deal_number.to_le_bytes());
    ChaCha20Rng::from_seed(h.finalize().into())
}

/// The encoding a state hash is computed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// postcard: compact, field order without names.
    Compact,
    /// JSON (the first Shuangkou scheme).
    Json,
}

/// SHA-256 of `value`'s encoding, hex. The serialization goes into a per-thread buffer that is
/// reused rather than a fresh, repeatedly regrown `Vec` (this runs on every action); a failed
/// serialization hashes nothing (it cannot fail for the engines' state types).
pub fn state_hash<T: Serialize + ?Sized>(value: &T, encoding: Encoding) -> String {
    state_hash_from(value, encoding, &HashPrefix::default())
}

/// [`state_hash`], resuming from `prefix` when the encoding starts with its bytes (the same
/// digest, without compressing those blocks again); any other encoding is hashed whole.
pub fn state_hash_from<T: Serialize + ?Sized>(
    value: &T,
    encoding: Encoding,
    prefix: &HashPrefix,
) -> String {
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let hash_into = |buf: &mut Vec<u8>| {
        buf.clear();
        match encoding {
            Encoding::Json => {
                if serde_json::to_writer(&mut *buf, value).is_err() {
                    buf.clear();
                }
            }
            Encoding::Compact => match postcard::to_extend(value, std::mem::take(buf)) {
                Ok(bytes) => *buf = bytes,
                Err(_) => buf.clear(),
            },
        }
        hex_string(&prefix.digest(buf))
    };
    BUF.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => hash_into(&mut buf),
        Err(_) => hash_into(&mut Vec::new()),
    })
}

/// The SHA-256 state after the leading whole 64-byte blocks of an encoding that stays the same
/// from one action to the next (a game's configuration, rules and seed come first in its state),
/// so a state hash does not compress them again on every action. It is only a shortcut: the
/// digest of an encoding that starts with exactly these bytes resumes from the state, which is
/// the SHA-256 of the whole encoding by construction (Merkle–Damgård: the state after whole
/// blocks is all that those blocks contribute); any other encoding is hashed whole. The default
/// covers nothing.
#[derive(Clone, Default)]
pub struct HashPrefix {
    /// The leading bytes the state has absorbed (whole blocks).
    lead: Box<[u8]>,
    /// SHA-256's state after them (no buffered bytes: they are whole blocks).
    core: <Sha256 as CoreProxy>::Core,
}

impl HashPrefix {
    /// The prefix for encodings that start with `start`: its whole blocks (the rest of `start`,
    /// less than a block, is hashed with each encoding).
    pub fn new(start: &[u8]) -> HashPrefix {
        let lead = &start[..start.len() / 64 * 64];
        let mut h = Sha256::new();
        h.update(lead);
        let (core, _) = h.decompose();
        HashPrefix {
            lead: lead.into(),
            core,
        }
    }

    /// The bytes covered (a multiple of 64).
    pub fn len(&self) -> usize {
        self.lead.len()
    }

    /// True if the prefix covers nothing.
    pub fn is_empty(&self) -> bool {
        self.lead.is_empty()
    }

    /// True when `encoding` starts with the covered bytes (its digest resumes from the state).
    pub fn covers(&self, encoding: &[u8]) -> bool {
        !self.lead.is_empty() && encoding.starts_with(&self.lead)
    }

    /// SHA-256 of `encoding`.
    fn digest(&self, encoding: &[u8]) -> [u8; 32] {
        if !self.covers(encoding) {
            return Sha256::digest(encoding).into();
        }
        let mut h = Sha256::from_core(self.core.clone());
        h.update(&encoding[self.lead.len()..]);
        h.finalize().into()
    }
}

/// Lower-case hex of `bytes`, as `hex::encode` writes it, through a buffer on the stack for up
/// to 32 bytes (a SHA-256 digest): `hex::encode` collects a `String` a `char` at a time, which
/// cost more than a tenth of the state hash on every action.
pub fn hex_string(bytes: &[u8]) -> String {
    prefixed_hex("", bytes)
}

/// `prefix` followed by [`hex_string`]`(bytes)`, in one allocation.
pub fn prefixed_hex(prefix: &str, bytes: &[u8]) -> String {
    let mut buf = [0u8; 64];
    let hex = match buf.get_mut(..2 * bytes.len()) {
        Some(out) => match hex::encode_to_slice(bytes, out).map(|()| std::str::from_utf8(out)) {
            Ok(Ok(text)) => text,
            _ => return format!("{prefix}{}", hex::encode(bytes)),
        },
        None => return format!("{prefix}{}", hex::encode(bytes)),
    };
    let mut text = String::with_capacity(prefix.len() + hex.len());
    text.push_str(prefix);
    text.push_str(hex);
    text
}

/// `n` in decimal (as `Display` writes it), written at the end of `buf`, without the formatting
/// machinery: for the text of numbers on every request (a SubmitPlay digest's `expected_seq`, an
/// event's cursor).
pub fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// Where a replay diverged: the 1-based step, and what happened there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("replay diverged at step {step}: {message}")]
pub struct Divergence {
    pub step: usize,
    pub message: String,
}

/// Re-executes `actions` on `state` with `apply`, checking `hashes` (the state hash after each
/// action, when given) at every step; stops at the first rejected action or differing hash, and
/// returns the state after the last action.
pub fn replay_log<S, A: Copy, E: std::fmt::Display>(
    mut state: S,
    actions: &[A],
    hashes: Option<&[String]>,
    mut apply: impl FnMut(&mut S, A) -> Result<(), E>,
    hash: impl Fn(&S) -> String,
) -> Result<S, Divergence> {
    for (i, a) in actions.iter().enumerate() {
        apply(&mut state, *a).map_err(|err| Divergence {
            step: i + 1,
            message: format!("action rejected: {err}"),
        })?;
        if let Some(h) = hashes.and_then(|h| h.get(i)) {
            let got = hash(&state);
            if &got != h {
                return Err(Divergence {
                    step: i + 1,
                    message: format!("state hash {got} != recorded {h}"),
                });
            }
        }
    }
    Ok(state)
}

/// Check, then apply, for a step that may fail half-way (one that calls hooks whose output is
/// validated as it goes): `step` runs on `state` itself when `in_place` (the caller checked
/// that it cannot fail once started), otherwise on a copy that replaces `state` only when the
/// step succeeds. Either way a failed step leaves `state` as it was.
pub fn apply_atomically<S: Clone, T, E>(
    state: &mut S,
    in_place: bool,
    step: impl FnOnce(&mut S) -> Result<T, E>,
) -> Result<T, E> {
    if in_place {
        return step(state);
    }
    let mut next = state.clone();
    let out = step(&mut next)?;
    *state = next;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn hex_strings_are_those_of_hex_encode() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for len in 0..=40 {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            assert_eq!(hex_string(&bytes), hex::encode(&bytes), "{len} bytes");
            let prefixed = prefixed_hex("x3:", &bytes);
            assert_eq!(
                prefixed,
                format!("x3:{}", hex::encode(&bytes)),
                "{len} bytes"
            );
        }
        assert_eq!(hex_string(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }

    #[test]
    fn streams_differ_by_domain_seed_and_deal() {
        let seed = [7u8; 32];
        let a = deal_stream(b"a", &seed, 1).next_u64();
        assert_eq!(a, deal_stream(b"a", &seed, 1).next_u64());
        assert_ne!(a, deal_stream(b"b", &seed, 1).next_u64());
        assert_ne!(a, deal_stream(b"a", &seed, 2).next_u64());
        assert_ne!(a, deal_stream(b"a", &[8u8; 32], 1).next_u64());
    }

    #[test]
    fn hashes_are_sha256_of_the_encoding() {
        let v = (1u8, 2u32);
        let compact = postcard::to_stdvec(&v).unwrap();
        assert_eq!(
            state_hash(&v, Encoding::Compact),
            hex::encode(Sha256::digest(&compact))
        );
        assert_eq!(
            state_hash(&v, Encoding::Json),
            hex::encode(Sha256::digest(b"[1,2]"))
        );
    }

    /// A hash resumed from a prefix is SHA-256 of the whole encoding: for encodings of every
    /// length around the block size, prefixes of their own start (whole blocks or less) and
    /// prefixes of other bytes (hashed whole).
    #[test]
    fn a_prefix_resumes_to_the_same_digest() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut covered = 0;
        for len in [0, 1, 63, 64, 65, 127, 128, 129, 200, 300] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let whole: [u8; 32] = Sha256::digest(&bytes).into();
            for start in [0, 1, 64, 100, 128, 130, len] {
                let own = HashPrefix::new(&bytes[..start.min(len)]);
                assert_eq!(own.len() % 64, 0);
                assert_eq!(own.covers(&bytes), !own.is_empty(), "{len} bytes, {start}");
                covered += usize::from(own.covers(&bytes));
                assert_eq!(own.digest(&bytes), whole, "{len} bytes from {start}");
                let mut other = bytes.clone();
                other.resize(start.max(64), 0);
                other[0] ^= 1;
                let foreign = HashPrefix::new(&other);
                assert!(!foreign.covers(&bytes));
                assert_eq!(
                    foreign.digest(&bytes),
                    whole,
                    "{len} bytes, foreign {start}"
                );
            }
        }
        assert!(covered > 20, "the prefixes were used: {covered}");
        let v = (
            7u64,
            "a string long enough to fill more than one block of the hash, twice over",
        );
        let compact = postcard::to_stdvec(&v).unwrap();
        let prefix = HashPrefix::new(&compact);
        assert_eq!(prefix.len(), 64);
        assert_eq!(
            state_hash_from(&v, Encoding::Compact, &prefix),
            state_hash(&v, Encoding::Compact)
        );
        assert_eq!(
            state_hash_from(&v, Encoding::Json, &prefix),
            state_hash(&v, Encoding::Json)
        );
    }

    #[test]
    fn a_failed_step_on_a_copy_leaves_the_state_as_it_was() {
        let mut v = vec![1, 2];
        let failed: Result<(), &str> = apply_atomically(&mut v, false, |v| {
            v.push(3);
            Err("half-way")
        });
        assert_eq!(failed, Err("half-way"));
        assert_eq!(v, [1, 2]);
        let pushed = apply_atomically(&mut v, false, |v| {
            v.push(3);
            Ok::<_, ()>(v.len())
        });
        assert_eq!(pushed, Ok(3));
        assert_eq!(v, [1, 2, 3]);
        // In place, the step's own changes stay (the caller vouched it cannot fail half-way).
        let _ = apply_atomically(&mut v, true, |v| {
            v.push(4);
            Err::<(), _>(())
        });
        assert_eq!(v, [1, 2, 3, 4]);
    }

    #[test]
    fn a_replay_stops_at_the_first_rejected_action_or_differing_hash() {
        let add = |s: &mut u32, a: u32| {
            if a == 0 {
                return Err("zero");
            }
            *s += a;
            Ok(())
        };
        let hash = |s: &u32| s.to_string();
        assert_eq!(replay_log(0, &[1, 2], None, add, hash), Ok(3));
        let rejected = replay_log(0, &[1, 0, 2], None, add, hash).unwrap_err();
        assert_eq!(
            (rejected.step, rejected.message.as_str()),
            (2, "action rejected: zero")
        );
        let hashes = ["1".to_string(), "4".to_string()];
        let differs = replay_log(0, &[1, 2], Some(&hashes), add, hash).unwrap_err();
        assert_eq!(differs.step, 2);
        assert_eq!(
            differs.to_string(),
            "replay diverged at step 2: state hash 3 != recorded 4"
        );
    }
}
