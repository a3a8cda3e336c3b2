//! The SubmitPlay digest against the way it was first computed.

use super::*;
use crate::cards::CardSet;
use crate::hand::{Declared, HandType};

/// The digest as it was first computed (parts built as Strings, then `request_digest`):
/// a retry after an upgrade must get the same answer as before.
fn built(action: &wire::Action, expected: Option<u64>) -> String {
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
    request_digest(&[
        kind.as_bytes(),
        &cards,
        declared.as_bytes(),
        expected.as_bytes(),
    ])
}

#[test]
fn submit_digests_are_those_of_before() {
    let cards = CardSet::from_ids(&[0, 1, 53, 54, 107]).unwrap();
    let key = Some(crate::cards::Rank::EIGHT);
    let actions = [
        wire::Action::Pass,
        wire::Action::Play {
            cards,
            declared: None,
        },
        wire::Action::Play {
            cards: CardSet::EMPTY,
            declared: None,
        },
        wire::Action::Play {
            cards,
            declared: Some(Declared {
                kind: HandType::Bomb,
                key: None,
            }),
        },
        wire::Action::Play {
            cards,
            declared: Some(Declared {
                kind: HandType::Bomb,
                key,
            }),
        },
    ];
    for action in &actions {
        for expected in [None, Some(0), Some(7), Some(10), Some(u64::MAX)] {
            assert_eq!(
                submit_digest(action, expected),
                built(action, expected),
                "{action:?} {expected:?}"
            );
        }
    }
    assert_eq!(
        submit_digest(&wire::Action::Pass, Some(3)),
        "7d981f41b3461d1d170f9ea4479b5690",
        "the digest an earlier server stored (SHA-256 of the length-prefixed parts)"
    );
}
