//! Non-interference of the 升級 views: whatever a viewer may not see can be changed without
//! changing anything the viewer sees.
//!
//! For random games cut at a random step, and each viewer, the cards hidden from the viewer are
//! worked out from the rules (not from the views): all but its own hand, the cards played, the
//! turned-over bottom and the shown card — and, for the dealer after it took the bottom, the
//! bottom and what it buried. Those hidden cards are permuted (within their effective suits once
//! the trump suit is fixed, so every play stays legal), the same actions are replayed on the
//! permuted deck, and every view and every event as the viewer sees it must be identical.

pub mod shengji_support;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use shengji_support::{deal_all, permute, permuted_replay, random_prefix, visible};
use shuangkou::cards::CardSet;
use shuangkou::seat::{Player, Seat};
use shuangkou::shengji::order::ONE_DECK;
use shuangkou::shengji::sim::match_seed;
use shuangkou::shengji::{Action, Event, StandardHooks, Viewer, event_view};

#[test]
fn no_view_or_event_depends_on_a_card_the_viewer_may_not_see() {
    let viewers = [
        Viewer::Player(Player::new(0)),
        Viewer::Player(Player::new(1)),
        Viewer::Player(Player::new(2)),
        Viewer::Player(Player::new(3)),
        Viewer::Spectator,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut changed = 0;
    for index in 0..120u64 {
        // Cut somewhere in deal 1: dealing, the exchange, or any trick but the last.
        let cut = rng.random_range(1..=97);
        let (a, log, events) = random_prefix(match_seed(99, index), cut, &mut rng);
        for viewer in viewers {
            let hidden = ONE_DECK.difference(visible(&a, viewer));
            let map = permute(&a, hidden, &mut rng);
            let (b, events_b) = permuted_replay(&a, &log, &map);
            changed += usize::from(b.deck() != a.deck());
            let ctx = format!("seed index {index}, cut {cut}, {viewer:?}");
            let see = |evs: &[Event]| {
                evs.iter()
                    .map(|e| event_view(e, viewer))
                    .collect::<Vec<_>>()
            };
            assert_eq!(events.len(), events_b.len(), "{ctx}");
            for (i, (ea, eb)) in events.iter().zip(&events_b).enumerate() {
                assert_eq!(see(ea), see(eb), "{ctx}: events of step {i}");
            }
            assert_eq!(a.view(viewer), b.view(viewer), "{ctx}: views");
        }
    }
    assert!(
        changed > 300,
        "only {changed} permutations changed the deck"
    );
}

#[test]
fn the_bottom_is_the_dealers_alone_until_the_deal_ends() {
    let hooks = StandardHooks::default();
    let mut g = shengji_support::started(0, [2, 2], ["", "", "", ""], "");
    let ev = deal_all(&mut g, &hooks, None);
    let bottom: CardSet = g.deck()[48..].iter().copied().collect();
    let taken = ev
        .iter()
        .find(|e| matches!(e, Event::BottomTaken { .. }))
        .unwrap();
    assert_eq!(
        event_view(taken, Viewer::Player(Player::new(0))),
        Event::BottomTaken {
            seat: Seat::new(0),
            cards: Some(bottom)
        }
    );
    for v in [
        Viewer::Player(Player::new(1)),
        Viewer::Player(Player::new(2)),
        Viewer::Player(Player::new(3)),
        Viewer::Spectator,
    ] {
        assert_eq!(
            event_view(taken, v),
            Event::BottomTaken {
                seat: Seat::new(0),
                cards: None
            }
        );
        assert_eq!(g.view(v).bottom, None);
        assert_eq!(g.view(v).hand.intersection(bottom), CardSet::EMPTY);
        assert_eq!(g.view(v).all_hands, None);
    }
    assert_eq!(g.view(Viewer::Player(Player::new(0))).bottom, Some(bottom));
    let bury: CardSet = g.hand(Seat::new(0)).iter().take(6).collect();
    shengji_support::ok(
        &mut g,
        &hooks,
        Action::Bury {
            seat: Seat::new(0),
            cards: bury,
        },
    );
    assert_eq!(g.view(Viewer::Player(Player::new(0))).bottom, Some(bury));
    assert_eq!(g.view(Viewer::Player(Player::new(2))).bottom, None);
    assert_eq!(g.view(Viewer::Admin).bottom, Some(bury));
    // At the deal's end the buried cards are public in the result.
    let ev = shengji_support::play_out(&mut g, &hooks);
    let ended = ev
        .iter()
        .find(|e| matches!(e, Event::DealEnded(_)))
        .unwrap();
    let Event::DealEnded(r) = event_view(ended, Viewer::Spectator) else {
        panic!()
    };
    assert_eq!(r.buried, bury);
}
