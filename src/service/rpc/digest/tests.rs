//! The SubmitPlay digests of both formats against digests built another way, and the
//! comparison of a stored digest of either format.

use super::*;
use crate::cards::CardSet;
use crate::hand::{Declared, HandType};
use crate::service::record::request_digest;

/// The parts of a SubmitPlay as they were first built (Strings, then hashed whole).
fn built_parts(action: &wire::Action, expected: Option<u64>) -> [Vec<u8>; 4] {
    let (kind, cards, declared) = match action {
        wire::Action::Pass => ("pass", Vec::new(), String::new()),
        wire::Action::Play { cards, declared } => (
            "play",
            cards.ids(),
            declared.map_or(String::new(), |d| {
                format!(
                    "{}:{}",
                    d.kind.name(),
                    d.key.map(|k| k.symbol()).unwrap_or_default()
                )
            }),
        ),
    };
    let cards: Vec<u8> = cards.iter().flat_map(|c| c.to_le_bytes()).collect();
    let expected = expected.map_or("-".to_string(), |e| e.to_string());
    [
        kind.as_bytes().to_vec(),
        cards,
        declared.into_bytes(),
        expected.into_bytes(),
    ]
}

/// The SHA-256 digest as it was first computed (`request_digest` of the built parts): a retry
/// after an upgrade must get the same answer as before.
fn built_sha256(action: &wire::Action, expected: Option<u64>) -> String {
    let parts = built_parts(action, expected);
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    request_digest(&parts)
}

/// The XXH3 digest by the one-shot XXH3-128 of the framed parts, built whole.
fn built_xxh3(action: &wire::Action, expected: Option<u64>) -> String {
    let mut framed = Vec::new();
    for part in built_parts(action, expected) {
        framed.extend_from_slice(&(part.len() as u64).to_le_bytes());
        framed.extend_from_slice(&part);
    }
    let h = xxhash_rust::xxh3::xxh3_128(&framed);
    format!("x3:{h:032x}")
}

fn actions() -> Vec<wire::Action> {
    let cards = CardSet::from_ids(&[0, 1, 53, 54, 107]).unwrap();
    let all = CardSet::from_ids(&(0..108).collect::<Vec<u32>>()).unwrap();
    let key = Some(crate::cards::Rank::EIGHT);
    let play = |cards, declared| wire::Action::Play { cards, declared };
    let bomb = |key| {
        Some(Declared {
            kind: HandType::Bomb,
            key,
        })
    };
    vec![
        wire::Action::Pass,
        play(cards, None),
        play(CardSet::EMPTY, None),
        play(all, None),
        play(cards, bomb(None)),
        play(cards, bomb(key)),
    ]
}

const EXPECTED: [Option<u64>; 5] = [None, Some(0), Some(7), Some(10), Some(u64::MAX)];

#[test]
fn digests_of_both_formats_are_those_built_whole() {
    for action in &actions() {
        for expected in EXPECTED {
            let what = format!("{action:?} {expected:?}");
            assert_eq!(
                sha256_submit(action, expected),
                built_sha256(action, expected),
                "{what}"
            );
            let body = Body::submit(*action, expected);
            assert_eq!(body.recorded(), built_xxh3(action, expected), "{what}");
        }
    }
    assert_eq!(
        sha256_submit(&wire::Action::Pass, Some(3)),
        "7d981f41b3461d1d170f9ea4479b5690",
        "the digest an earlier server stored (SHA-256 of the length-prefixed parts)"
    );
}

/// A stored digest of either format is that of the same request (a retry) and of no other
/// (a reused key: IDEMPOTENCY_CONFLICT), SHA-256 ones as earlier servers stored them.
#[test]
fn stored_digests_of_either_format_compare() {
    let requests: Vec<_> = actions()
        .into_iter()
        .flat_map(|a| EXPECTED.map(|e| (a, e)))
        .collect();
    for &(action, expected) in &requests {
        let body = Body::submit(action, expected);
        for &(a, e) in &requests {
            let same = (a, e) == (action, expected);
            let what = format!("{action:?} {expected:?} against {a:?} {e:?}");
            assert_eq!(body.is(&built_sha256(&a, e)), same, "old format: {what}");
            assert_eq!(body.is(&built_xxh3(&a, e)), same, "new format: {what}");
        }
        let leave = request_digest(&[b"leave"]);
        assert!(!body.is(&leave), "a LeaveGame's digest under the same key");
        assert!(!Body::sha256(leave).is(body.recorded()));
    }
    let stored = "7d981f41b3461d1d170f9ea4479b5690";
    assert!(Body::submit(wire::Action::Pass, Some(3)).is(stored));
    assert!(!Body::submit(wire::Action::Pass, Some(4)).is(stored));
    let leave = Body::sha256(request_digest(&[b"leave"]));
    assert!(leave.is(&request_digest(&[b"leave"])));
}
