//! View non-interference: resampling every card a viewer cannot see (keeping what it can see)
//! leaves its view, serialized, byte-identical — for seats, partners under 雙明 and spectators.
//! Also: events are redacted the same way.

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::CardSet;
use shuangkou::game::testing::PlainHooks;
use shuangkou::game::{Action, Entry, Event, Game, GameConfig, GameError, Phase, Viewer};
use shuangkou::hand::{Declared, PlayError};
use shuangkou::rules::Rules;
use shuangkou::seat::{Player, Seat};

fn mid_game(seed: u64, steps: usize, double_open: bool) -> (Game, PlainHooks, Vec<Event>) {
    let mut hooks = PlainHooks::new(Rules::BAIBIAN);
    hooks.partners_see_hands = double_open;
    let cfg = GameConfig::new("t", "t", 3);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = [0u8; 32];
    rng.fill(&mut s);
    let (mut g, mut events) = Game::new(cfg, &hooks, s, None, 0).unwrap();
    for _ in 0..steps {
        if g.phase() != Phase::Playing {
            break;
        }
        let seat = g.turn().unwrap();
        let (plays, can_pass) = g.legal_plays(seat);
        let player = g.seating()[seat];
        let (action, chosen) = if can_pass && (plays.is_empty() || rng.random_bool(0.4)) {
            (Action::Pass, None)
        } else {
            let p = plays[rng.random_range(0..plays.len())];
            let cards = g.hand(seat).take(p.cards).unwrap();
            (
                Action::Play {
                    cards,
                    declared: None,
                },
                Some((cards, p.hand)),
            )
        };
        let entry = |action| Entry {
            player,
            action,
            at: 0,
        };
        // Every action is legal (a pass where allowed, a play of the legal list): any refusal
        // but an ambiguous undeclared play fails the generator, with its seed.
        let ev = match (g.apply(&hooks, entry(action)), chosen) {
            (Ok(ev), _) => ev,
            (Err(GameError::Play(PlayError::Ambiguous { .. })), Some((cards, hand))) => {
                // Declare the interpretation the legal list offered.
                let declared = Some(Declared {
                    kind: hand.kind,
                    key: hand.key(),
                });
                g.apply(&hooks, entry(Action::Play { cards, declared }))
                    .unwrap_or_else(|e| panic!("seed {seed}: the declared play refused: {e}"))
            }
            (Err(e), _) => panic!("seed {seed}: a legal action refused: {e}"),
        };
        events.extend(ev);
    }
    (g, hooks, events)
}

/// Shuffles the cards of `hidden` seats among them, keeping each seat's count.
fn resample(g: &Game, hidden: &[u8], rng: &mut ChaCha8Rng) -> Game {
    let mut pool: Vec<_> = hidden
        .iter()
        .flat_map(|&s| g.hand(Seat::new(s)).iter().collect::<Vec<_>>())
        .collect();
    pool.shuffle(rng);
    let mut hands: Vec<CardSet> = (0..g.players()).map(|s| g.hand(Seat::new(s))).collect();
    let mut it = pool.into_iter();
    for &s in hidden {
        let n = g.hand(Seat::new(s)).len();
        hands[s as usize] = it.by_ref().take(n).collect();
    }
    g.with_hands(hands).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn views_do_not_depend_on_hidden_cards(seed in any::<u64>(), steps in 0usize..120, double_open in any::<bool>()) {
        let (g, _, _) = mid_game(seed, steps, double_open);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xABCD);
        let n = g.players();
        // Spectator: every hand is hidden.
        let all: Vec<u8> = (0..n).collect();
        let other = resample(&g, &all, &mut rng);
        prop_assert_eq!(
            serde_json::to_string(&g.view(Viewer::Spectator)).unwrap(),
            serde_json::to_string(&other.view(Viewer::Spectator)).unwrap()
        );
        for player in 0..n {
            let seat = g.seat_of(Player::new(player)).unwrap();
            let partner = seat.partner(4);
            let hidden: Vec<u8> = (0..n)
                .filter(|&s| {
                    Seat::new(s) != seat && !(double_open && n == 4 && Some(Seat::new(s)) == partner)
                })
                .collect();
            let other = resample(&g, &hidden, &mut rng);
            prop_assert_eq!(
                serde_json::to_string(&g.view(Viewer::Player(Player::new(player)))).unwrap(),
                serde_json::to_string(&other.view(Viewer::Player(Player::new(player)))).unwrap(),
                "seed {} player {}", seed, player
            );
        }
    }
}

#[test]
fn deal_start_events_show_only_what_the_viewer_may_see() {
    for double_open in [false, true] {
        let (g, _, events) = mid_game(11, 5, double_open);
        let Some(Event::DealStarted { hands, players, .. }) = events.first() else {
            panic!()
        };
        for p in 0..4u8 {
            let seat = players.seat_of(Player::new(p)).unwrap().index();
            let Event::DealStarted { hands: seen, .. } =
                g.event_view(&events[0], Viewer::Player(Player::new(p)))
            else {
                panic!()
            };
            for (s, h) in seen.iter().enumerate() {
                let visible = s == seat || (double_open && s == (seat + 2) % 4);
                assert_eq!(
                    *h == hands[s],
                    visible,
                    "player {p} seat {s} double_open {double_open}"
                );
                if !visible {
                    assert!(h.is_empty());
                }
            }
        }
        let Event::DealStarted { hands: seen, .. } = g.event_view(&events[0], Viewer::Spectator)
        else {
            panic!()
        };
        assert!(seen.iter().all(|h| h.is_empty()));
        // A view never carries another seat's hand (outside 雙明).
        let v = g.view(Viewer::Player(Player::new(0)));
        assert_eq!(v.partner_hand.is_some(), double_open);
        assert!(v.all_hands.is_none());
        assert!(g.view(Viewer::Admin).all_hands.is_some());
    }
}
