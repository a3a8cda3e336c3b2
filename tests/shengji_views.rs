//! Non-interference of the 升級 views: whatever a viewer may not see can be changed without
//! changing anything the viewer sees.
//!
//! For random games cut at a random step, and each viewer, the cards hidden from the viewer are
//! worked out from the rules (not from the views): all but its own hand, the cards played, the
//! turned-over bottom and the shown card — and, for the dealer after it took the bottom, the
//! bottom and what it buried. Those hidden cards are permuted (within their effective suits once
//! the trump suit is fixed, so every play stays legal), the same actions are replayed on the
//! permuted deck, and every view and every event as the viewer sees it must be identical.

mod shengji_support;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use shengji_support::{deal_all, map_action, permute, visible};
use shuangkou::cards::{Card, CardSet};
use shuangkou::shengji::order::ONE_DECK;
use shuangkou::shengji::sim::{match_seed, random_action};
use shuangkou::shengji::{Action, Event, Game, Setup, StandardHooks, Viewer, event_view};

#[test]
fn no_view_or_event_depends_on_a_card_the_viewer_may_not_see() {
    let hooks = StandardHooks::default();
    let viewers = [
        Viewer::Player(0),
        Viewer::Player(1),
        Viewer::Player(2),
        Viewer::Player(3),
        Viewer::Spectator,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut changed = 0;
    for index in 0..120u64 {
        let seed = match_seed(99, index);
        let (mut a, start_events) = Game::new(Setup::seeded(seed)).unwrap();
        // Cut somewhere in deal 1: dealing, the exchange, or any trick but the last.
        let cut = rng.random_range(1..=97);
        let mut log = Vec::new();
        let mut events = vec![start_events];
        while log.len() < cut {
            let action = random_action(&a, &hooks, &mut rng, 0.08).unwrap();
            if matches!(action, Action::Play { .. }) && a.tricks_played() == 11 {
                break;
            }
            events.push(a.apply(&hooks, action).unwrap());
            log.push(action);
        }
        let deck_a = a.deck().to_vec();
        for viewer in viewers {
            let hidden = ONE_DECK.difference(visible(&a, viewer));
            let map = permute(&a, hidden, &mut rng);
            let deck_b: Vec<Card> = deck_a.iter().map(|c| map[c]).collect();
            changed += usize::from(deck_b != deck_a);
            let setup = Setup {
                deck: Some(deck_b),
                ..Setup::seeded(seed)
            };
            let (mut b, start_b) = Game::new(setup).unwrap();
            let ctx = format!("seed index {index}, cut {cut}, {viewer:?}");
            let see = |evs: &[Event]| {
                evs.iter()
                    .map(|e| event_view(e, viewer))
                    .collect::<Vec<_>>()
            };
            assert_eq!(see(&events[0]), see(&start_b), "{ctx}");
            for (i, action) in log.iter().enumerate() {
                let ev_b = b
                    .apply(&hooks, map_action(*action, &map))
                    .unwrap_or_else(|e| {
                        panic!("{ctx}: step {i} rejected on the permuted deck: {e}")
                    });
                assert_eq!(
                    see(&events[i + 1]),
                    see(&ev_b),
                    "{ctx}: events of step {}",
                    i + 1
                );
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
        event_view(taken, Viewer::Player(0)),
        Event::BottomTaken {
            seat: 0,
            cards: Some(bottom)
        }
    );
    for v in [
        Viewer::Player(1),
        Viewer::Player(2),
        Viewer::Player(3),
        Viewer::Spectator,
    ] {
        assert_eq!(
            event_view(taken, v),
            Event::BottomTaken {
                seat: 0,
                cards: None
            }
        );
        assert_eq!(g.view(v).bottom, None);
        assert_eq!(g.view(v).hand.intersection(bottom), CardSet::EMPTY);
        assert_eq!(g.view(v).all_hands, None);
    }
    assert_eq!(g.view(Viewer::Player(0)).bottom, Some(bottom));
    let bury: CardSet = g.hand(0).iter().take(6).collect();
    shengji_support::ok(
        &mut g,
        &hooks,
        Action::Bury {
            seat: 0,
            cards: bury,
        },
    );
    assert_eq!(g.view(Viewer::Player(0)).bottom, Some(bury));
    assert_eq!(g.view(Viewer::Player(2)).bottom, None);
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
