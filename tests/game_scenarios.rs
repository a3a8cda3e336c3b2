//! Scenario tests of the deal engine for the rules of docs/rules/RULES.md §1 and §7 (docs/rules/VECTORS.md section D):
//! 接風, the deal's end and outcome (雙扣 / 單扣 / 平扣), escapes, the shown card and seat swaps,
//! the classic leader rule, two-player results, timeouts and rejected actions.

use shuangkou::cards::{CardSet, RankCounts};
use shuangkou::game::hooks::{
    DealFacts, EscapeFacts, HookError, Outcome, SeatingDecision, SeatingFacts, Settlement, SumRule,
    TimeoutFacts, VariantHooks,
};
use shuangkou::game::testing::PlainHooks;
use shuangkou::game::{Action, EngineError, Entry, Event, Game, GameConfig, GameError, Phase};
use shuangkou::rules::Rules;
use shuangkou::seat::{Player, Seat, Seating};

// Seats as patterns (a `const` matches where a call cannot).
const SEAT_0: Seat = Seat::new(0);
const SEAT_1: Seat = Seat::new(1);
const SEAT_2: Seat = Seat::new(2);

fn config(deals: u32, turn_ms: Option<u64>) -> GameConfig {
    GameConfig {
        turn_ms,
        ..GameConfig::new("test", "test", deals)
    }
}

/// Physical cards for each seat, from rank notation (lowest free ids first).
fn hands(spec: &[&str]) -> Vec<CardSet> {
    let mut free = CardSet::FULL;
    spec.iter()
        .map(|s| {
            let rc: RankCounts = s.parse().unwrap();
            let cards = free.take(rc).unwrap();
            free = free.difference(cards);
            cards
        })
        .collect()
}

/// A game of `spec`'s hands under plain hooks where seat 0 always leads and nobody swaps:
/// scenarios control the table.
fn start(spec: &[&str], rules: Rules) -> (Game, PlainHooks) {
    let hooks = PlainHooks::new(rules).led_by(Seat::new(0));
    let (g, _) = Game::new(config(1, None), &hooks, [7; 32], Some(hands(spec)), 0).unwrap();
    (g, hooks)
}

fn play(g: &mut Game, h: &dyn VariantHooks, seat: u8, cards: &str) -> Vec<Event> {
    let player = g.seating()[Seat::new(seat)];
    let rc: RankCounts = cards.parse().unwrap();
    let cards = g.hand(Seat::new(seat)).take(rc).unwrap();
    g.apply(
        h,
        Entry {
            player,
            action: Action::Play {
                cards,
                declared: None,
            },
            at: 1,
        },
    )
    .unwrap_or_else(|e| panic!("seat {seat} play {rc}: {e}"))
}

fn pass(g: &mut Game, h: &dyn VariantHooks, seat: u8) -> Vec<Event> {
    let player = g.seating()[Seat::new(seat)];
    g.apply(
        h,
        Entry {
            player,
            action: Action::Pass,
            at: 1,
        },
    )
    .unwrap_or_else(|e| panic!("seat {seat} pass: {e}"))
}

/// Plays `moves` in order (seat, cards or "pass"); the events of the last one.
fn turns(g: &mut Game, h: &dyn VariantHooks, moves: &[(u8, &str)]) -> Vec<Event> {
    let mut events = Vec::new();
    for &(seat, cards) in moves {
        events = match cards {
            "pass" => pass(g, h, seat),
            _ => play(g, h, seat, cards),
        };
    }
    events
}

fn deal_end(events: &[Event]) -> Option<&shuangkou::game::DealResult> {
    events.iter().find_map(|e| match e {
        Event::DealEnded(r) => Some(r),
        _ => None,
    })
}

/// `events` end the deal with `outcome`, the seats out in the order `places`.
fn assert_deal_ended(events: &[Event], outcome: Outcome, places: &[u8]) {
    let r = deal_end(events).unwrap();
    assert_eq!(r.outcome, Some(outcome));
    assert_eq!(r.places, Seat::list(places));
}

#[test]
fn jie_feng_partner_leads_after_unbeaten_last_play() {
    // F01: N plays its last card, everyone passes: S (N's partner) leads.
    let (mut g, h) = start(&["3", "4 4", "5 5", "6 6"], Rules::CLASSIC);
    let ev = play(&mut g, &h, 0, "3");
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::PlayerOut {
            seat: SEAT_0,
            place: 1
        }
    )));
    assert_eq!(g.turn(), Some(Seat::new(1)));
    let ev = turns(&mut g, &h, &[(1, "pass"), (2, "pass"), (3, "pass")]);
    assert!(
        ev.iter().any(|e| matches!(
            e,
            Event::TrickWon {
                winner: SEAT_0,
                leader: SEAT_2,
                jie_feng: true
            }
        )),
        "{ev:?}"
    );
    assert_eq!(g.turn(), Some(Seat::new(2)));
    assert!(g.top().is_none(), "S leads freely");
}

#[test]
fn beaten_last_play_goes_to_the_trick_winner() {
    // F02: N plays its last card, E beats it, S and W pass (N is skipped): E leads.
    let (mut g, h) = start(&["3", "4 9", "5 5", "6 6"], Rules::CLASSIC);
    let ev = turns(&mut g, &h, &[(0, "3"), (1, "9"), (2, "pass"), (3, "pass")]);
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::TrickWon {
            winner: SEAT_1,
            leader: SEAT_1,
            jie_feng: false
        }
    )));
    assert_eq!(g.turn(), Some(Seat::new(1)));
}

#[test]
fn a_pass_does_not_lock_a_player_out_of_the_trick() {
    let (mut g, h) = start(&["3 8", "4 9", "5 T", "6 J"], Rules::CLASSIC);
    turns(&mut g, &h, &[(0, "3"), (1, "pass"), (2, "5"), (3, "pass")]);
    // N passed nothing yet; E passed before S's play and may play again now.
    pass(&mut g, &h, 0);
    play(&mut g, &h, 1, "9");
    assert_eq!(g.top().map(|t| t.seat), Some(Seat::new(1)));
}

#[test]
fn double_ends_after_the_second_player_of_a_team() {
    // F03: N 1st, S 2nd → 雙扣 at once, E and W still holding cards.
    let (mut g, h) = start(&["3", "4 4", "5", "6 6"], Rules::CLASSIC);
    let ev = turns(&mut g, &h, &[(0, "3"), (1, "pass"), (2, "5")]);
    let r = deal_end(&ev).expect("the deal ends when S goes out");
    assert_eq!(r.outcome, Some(Outcome::Double));
    assert_eq!(&r.places[..2], &Seat::list(&[0, 2]));
    assert_eq!(g.phase(), Phase::Finished);
    assert_eq!(r.settlement.scores, vec![400, -400, 400, -400]);
}

#[test]
fn single_when_winners_are_first_and_third() {
    // F04: N 1st, E 2nd, S 3rd → 單扣 when S finishes.
    let (mut g, h) = start(&["3", "4", "5 8", "6 6"], Rules::CLASSIC);
    turns(&mut g, &h, &[(0, "3"), (1, "4"), (2, "5"), (3, "pass")]);
    // The trick goes to S (still active) who leads.
    assert_eq!(g.turn(), Some(Seat::new(2)));
    let ev = play(&mut g, &h, 2, "8");
    assert_deal_ended(&ev, Outcome::Single, &[0, 1, 2, 3]);
}

#[test]
fn draw_when_winners_are_first_and_fourth() {
    // F05: N 1st, E 2nd, W 3rd → the E–W pair is complete; S is 4th; 平扣.
    let (mut g, h) = start(&["3", "4", "6 6", "5"], Rules::CLASSIC);
    let ev = turns(&mut g, &h, &[(0, "3"), (1, "4"), (2, "pass"), (3, "5")]);
    assert_deal_ended(&ev, Outcome::Draw, &[0, 1, 3, 2]);
}

#[test]
fn jie_feng_when_partner_is_out_ends_the_deal_anyway() {
    // S is out; N goes out on an unbeaten play: the team is complete, the deal is over.
    let (mut g, h) = start(&["3 3", "4 4", "5", "2 2"], Rules::CLASSIC);
    let ev = turns(&mut g, &h, &[(0, "3"), (1, "pass"), (2, "5")]);
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::PlayerOut {
            seat: SEAT_2,
            place: 1
        }
    )));
    let ev = turns(&mut g, &h, &[(3, "pass"), (0, "pass"), (1, "pass")]);
    // 接風 from S to N.
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::TrickWon {
            winner: SEAT_2,
            leader: SEAT_0,
            jie_feng: true
        }
    )));
    let ev = play(&mut g, &h, 0, "3");
    let r = deal_end(&ev).expect("N and S both out");
    assert_eq!(r.outcome, Some(Outcome::Double));
}

#[test]
fn escape_mid_trick_ends_the_deal_and_the_match() {
    let hooks = PlainHooks::new(Rules::BAIBIAN).led_by(Seat::new(0));
    let (mut g, _) = Game::new(config(4, None), &hooks, [1; 32], None, 0).unwrap();
    let seat = g.turn().unwrap();
    let (plays, _) = g.legal_plays(seat);
    let cards = g.hand(seat).take(plays[0].cards).unwrap();
    let player = g.seating()[seat];
    g.apply(
        &hooks,
        Entry {
            player,
            action: Action::Play {
                cards,
                declared: None,
            },
            at: 5,
        },
    )
    .unwrap();
    // Somebody who is not to act leaves.
    let leaver = g.seating()[seat.partner(4).unwrap()];
    let ev = g
        .apply(
            &hooks,
            Entry {
                player: leaver,
                action: Action::Leave,
                at: 6,
            },
        )
        .unwrap();
    assert!(ev.iter().any(|e| matches!(e, Event::Escaped { .. })));
    let r = deal_end(&ev).unwrap();
    assert_eq!(r.outcome, None);
    assert_eq!(r.escaped, seat.partner(4));
    assert_eq!(r.settlement.scores.iter().sum::<i64>(), 0);
    assert_eq!(g.phase(), Phase::Finished);
    assert!(matches!(
        g.apply(
            &hooks,
            Entry {
                player: Player::new(0),
                action: Action::Pass,
                at: 7
            }
        ),
        Err(GameError::Engine(EngineError::GameOver))
    ));
}

#[test]
fn rejected_actions_change_nothing() {
    let (mut g, h) = start(&["3 3 4", "5 5 6", "7 7 8", "9 9 T"], Rules::CLASSIC);
    let before = serde_json::to_string(&g).unwrap();
    let cases: Vec<(Entry, &str)> = vec![
        (
            Entry {
                player: Player::new(1),
                action: Action::Pass,
                at: 1,
            },
            "not your turn",
        ),
        (
            Entry {
                player: Player::new(0),
                action: Action::Pass,
                at: 1,
            },
            "must lead",
        ),
        (
            Entry {
                player: Player::new(0),
                action: Action::Play {
                    cards: g.hand(Seat::new(1)).take("5".parse().unwrap()).unwrap(),
                    declared: None,
                },
                at: 1,
            },
            "cards not held",
        ),
        (
            Entry {
                player: Player::new(0),
                action: Action::Play {
                    cards: g.hand(Seat::new(0)).take("3 4".parse().unwrap()).unwrap(),
                    declared: None,
                },
                at: 1,
            },
            "not a combination",
        ),
        (
            Entry {
                player: Player::new(9),
                action: Action::Pass,
                at: 1,
            },
            "no such player",
        ),
        (
            Entry {
                player: Player::new(0),
                action: Action::Timeout,
                at: 1,
            },
            "no deadline",
        ),
    ];
    for (entry, why) in cases {
        assert!(g.apply(&h, entry).is_err(), "{why} should be rejected");
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            before,
            "{why} changed the state"
        );
    }
    play(&mut g, &h, 0, "3 3");
    play(&mut g, &h, 1, "5 5");
    // E's pair beat N's; now S must beat 5 5 with a pair: a single is refused.
    let before = serde_json::to_string(&g).unwrap();
    let single = g.hand(Seat::new(2)).take("8".parse().unwrap()).unwrap();
    let r = g.apply(
        &h,
        Entry {
            player: Player::new(2),
            action: Action::Play {
                cards: single,
                declared: None,
            },
            at: 1,
        },
    );
    assert!(matches!(r, Err(GameError::Play(_))), "{r:?}");
    assert_eq!(
        serde_json::to_string(&g).unwrap(),
        before,
        "the refused single changed the state"
    );
    assert_eq!(g.turn(), Some(Seat::new(2)), "S is still to act");
}

#[test]
fn shown_card_held_twice_keeps_the_seats() {
    // F10: every hand holds both copies of its cards, so the shown card's twin is with the
    // leader: no swap, the holder leads.
    let rules = Rules::BAIBIAN;
    let hooks = PlainHooks::new(rules);
    let mut spec: Vec<CardSet> = Vec::new();
    let ranks = ["3 3 4 4", "5 5 6 6", "7 7 8 8", "9 9 T T"];
    for r in ranks {
        // Both decks' copies of the same suit and rank: ids i and i + 54.
        let rc: RankCounts = r.parse().unwrap();
        let mut set = CardSet::EMPTY;
        for (rank, n) in rc.iter() {
            for k in 0..(n / 2) {
                let c = shuangkou::cards::Card::from_parts(0, suit(k), rank);
                set.insert(c);
                set.insert(shuangkou::cards::Card::from_parts(1, suit(k), rank));
            }
        }
        spec.push(set);
    }
    for seed in 0..8u8 {
        let (g, ev) =
            Game::new(config(1, None), &hooks, [seed; 32], Some(spec.clone()), 0).unwrap();
        let (players, leader, shown_card) = deal_started(&ev);
        assert_eq!(
            players.players(),
            Player::list(&[0, 1, 2, 3]),
            "seed {seed}: nobody moves"
        );
        assert!(
            g.hand(*leader).contains(*shown_card),
            "seed {seed}: the holder leads"
        );
    }
}

/// The seating, the leader and the shown card of the deal `events` start.
fn deal_started(events: &[Event]) -> (&Seating, &Seat, &shuangkou::cards::Card) {
    match events.first() {
        Some(Event::DealStarted {
            players,
            leader,
            shown_card,
            ..
        }) => (players, leader, shown_card),
        _ => panic!("no deal start"),
    }
}

fn suit(k: u8) -> shuangkou::cards::Suit {
    use shuangkou::cards::Suit::*;
    [Spades, Hearts, Clubs, Diamonds][k as usize % 4]
}

#[test]
fn shown_card_twin_holder_swaps_with_the_seat_opposite() {
    // F09: N holds the shown card, E the twin: E swaps with S, so N and E become partners.
    let hooks = PlainHooks::new(Rules::BAIBIAN);
    let c = |deck, rank: &str| {
        shuangkou::cards::Card::from_parts(
            deck,
            shuangkou::cards::Suit::Hearts,
            rank.parse().unwrap(),
        )
    };
    // N: deck-0 hearts 3..7; E: the deck-1 twins; S and W: spades.
    let n: CardSet = ["3", "4", "5", "6", "7"].iter().map(|r| c(0, r)).collect();
    let e: CardSet = ["3", "4", "5", "6", "7"].iter().map(|r| c(1, r)).collect();
    let s = hands(&["8 8 8 8 8"])[0];
    let w = CardSet::FULL
        .difference(n)
        .difference(e)
        .difference(s)
        .take("9 9 9 9 9".parse().unwrap())
        .unwrap();
    let mut found = false;
    for seed in 0..64u8 {
        let (g, ev) = Game::new(
            config(1, None),
            &hooks,
            [seed; 32],
            Some(vec![n, e, s, w]),
            0,
        )
        .unwrap();
        let (players, leader, shown_card) = deal_started(&ev);
        if n.contains(*shown_card) {
            assert_eq!(*leader, Seat::new(0));
            assert_eq!(
                players.players(),
                Player::list(&[0, 2, 1, 3]),
                "E (player 1) moved opposite... to seat 2"
            );
            assert_eq!(g.hand(Seat::new(2)), e, "E's hand moved with E");
            assert_eq!(g.partner(Seat::new(0)), Some(Seat::new(2)));
            found = true;
            break;
        }
    }
    assert!(found, "no seed in 0..64 showed one of N's cards");
}

#[test]
fn classic_leader_follows_the_previous_result() {
    // F07/F08 with the real classic script: after 單扣/平扣 the previous 1st finisher leads.
    let compiled = shuangkou::variants::builtin("classic").unwrap();
    let hooks = compiled.with_defaults().unwrap();
    let mut after_single = 0;
    let mut checked = 0;
    for seed in 0..40u8 {
        let (mut g, _) = Game::new(config(2, None), &hooks, [seed; 32], None, 0).unwrap();
        let mut rng = seed as usize;
        let mut first_result = None;
        while g.phase() == Phase::Playing && g.deal_number() == 1 {
            let seat = g.turn().unwrap();
            let (plays, can_pass) = g.legal_plays(seat);
            let player = g.seating()[seat];
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let action = if can_pass && (plays.is_empty() || rng % 3 == 0) {
                Action::Pass
            } else {
                let p = &plays[(rng >> 33) % plays.len()];
                Action::Play {
                    cards: g.hand(seat).take(p.cards).unwrap(),
                    declared: Some(shuangkou::hand::Declared {
                        kind: p.hand.kind,
                        key: p.hand.key(),
                    }),
                }
            };
            for e in g
                .apply(
                    &hooks,
                    Entry {
                        player,
                        action,
                        at: 0,
                    },
                )
                .unwrap()
            {
                if let Event::DealEnded(r) = e {
                    first_result = Some(r);
                }
            }
        }
        let r = first_result.unwrap();
        let first_player = r.players[r.places[0]];
        assert_eq!(
            g.deal_number(),
            2,
            "seed {seed}: second deal started ({:?})",
            g.phase()
        );
        let leader_player = g.seating()[g.turn().unwrap()];
        checked += 1;
        if r.outcome != Some(Outcome::Double) {
            assert_eq!(
                leader_player, first_player,
                "seed {seed}: after {:?} the previous 1st leads",
                r.outcome
            );
            after_single += 1;
        }
    }
    assert!(
        checked == 40 && after_single > 5,
        "enough 單扣/平扣 deals were checked ({after_single})"
    );
}

#[test]
fn two_player_outcome_by_cards_left() {
    let rules = Rules::ERREN;
    for (loser, expect) in [
        ("4 4 4 4 4 4 4 4 5 5 5 5", Outcome::Double),
        ("4 4 4 4 4 4 4 4 5 5 5", Outcome::Single),
        ("4 4 4 4 4 4 4", Outcome::Single),
        ("4 4 4 4 4 4", Outcome::Draw),
        ("4", Outcome::Draw),
    ] {
        let (mut g, h) = start(&["3", loser], rules);
        let ev = play(&mut g, &h, 0, "3");
        let r = deal_end(&ev).expect("one player out ends the 2-player deal");
        assert_eq!(r.outcome, Some(expect), "loser holds {loser}");
    }
}

/// Plain hooks (seat 0 leads) whose timeout hook says "escape" whenever it is asked, and records what it was
/// told: the engine alone decides when to ask (`max_consecutive_timeouts`).
struct EscapeWhenAsked {
    inner: PlainHooks,
    asked: std::sync::Mutex<Vec<TimeoutFacts>>,
}

impl VariantHooks for EscapeWhenAsked {
    fn rules(&self) -> &Rules {
        self.inner.rules()
    }
    fn partners_see_hands(&self) -> bool {
        self.inner.partners_see_hands()
    }
    fn sum_rule(&self) -> SumRule {
        self.inner.sum_rule()
    }
    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        self.inner.seating(f)
    }
    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        self.inner.settle(f)
    }
    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.inner.settle_escape(f)
    }
    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.asked.lock().unwrap().push(*f);
        Ok(true)
    }
}

/// The count of consecutive timeouts starts again after a real play (the variants'
/// `timeouts_to_escape` counts consecutive turn timeouts): N times out, plays for itself on its next turn, then times out again:
/// one consecutive timeout, below the limit of 2, so the hook is not asked and nobody escapes.
#[test]
fn a_real_play_resets_the_consecutive_timeouts() {
    let hooks = EscapeWhenAsked {
        inner: PlainHooks::new(Rules::CLASSIC).led_by(Seat::new(0)),
        asked: std::sync::Mutex::new(Vec::new()),
    };
    let mut cfg = config(1, Some(1_000));
    cfg.max_consecutive_timeouts = 2;
    let (mut g, _) = Game::new(
        cfg,
        &hooks,
        [3; 32],
        Some(hands(&["3 3 9 K", "4 5", "5 6", "6 7"])),
        0,
    )
    .unwrap();
    let timeout = |g: &mut Game, at: u64| {
        g.apply(
            &hooks,
            Entry {
                player: Player::new(0),
                action: Action::Timeout,
                at,
            },
        )
        .unwrap()
    };
    // N's first timeout: the engine leads for it; the others pass, the lead comes back to N.
    timeout(&mut g, 1_000);
    turns(&mut g, &hooks, &[(1, "pass"), (2, "pass"), (3, "pass")]);
    assert_eq!(g.turn(), Some(SEAT_0));
    // N plays for itself, the others pass again.
    turns(
        &mut g,
        &hooks,
        &[(0, "9"), (1, "pass"), (2, "pass"), (3, "pass")],
    );
    assert_eq!(g.turn(), Some(SEAT_0));
    // N times out again: the first of a new run, not the second in a row.
    let ev = timeout(&mut g, 100_000);
    assert!(
        !ev.iter().any(|e| matches!(e, Event::Escaped { .. })),
        "a timeout after a real play is not the second consecutive one: {ev:?}"
    );
    assert!(
        hooks.asked.lock().unwrap().is_empty(),
        "one consecutive timeout is below the limit of 2: the hook is not asked"
    );
    assert_eq!(g.phase(), Phase::Playing);
}

#[test]
fn timeouts_auto_play_then_escape() {
    let hooks = EscapeWhenAsked {
        inner: PlainHooks::new(Rules::CLASSIC).led_by(Seat::new(0)),
        asked: std::sync::Mutex::new(Vec::new()),
    };
    let mut cfg = config(1, Some(1_000));
    cfg.max_consecutive_timeouts = 2;
    let (mut g, _) = Game::new(
        cfg,
        &hooks,
        [3; 32],
        Some(hands(&["3 3 9", "4 5", "5 6", "6 7"])),
        0,
    )
    .unwrap();
    let timeout = |g: &mut Game, player: u8, at: u64| {
        g.apply(
            &hooks,
            Entry {
                player: Player::new(player),
                action: Action::Timeout,
                at,
            },
        )
    };
    assert_eq!(g.deadline(), Some(1_000));
    assert!(matches!(timeout(&mut g, 0, 999), Err(GameError::NotDue)));
    // N times out while leading: the engine leads its weakest play (a single 3).
    let ev = timeout(&mut g, 0, 1_000).unwrap();
    assert!(
        ev.iter().any(|e| matches!(
            e,
            Event::Played {
                seat: SEAT_0,
                auto: true,
                ..
            }
        )),
        "{ev:?}"
    );
    assert_eq!(g.hand(Seat::new(0)).len(), 2, "the auto lead took one card");
    assert_eq!(g.deadline(), Some(2_000));
    // E, S and W time out once each while following: they pass, nobody escapes.
    for (seat, at) in [(1u8, 2_000u64), (2, 3_000), (3, 4_000)] {
        let ev = timeout(&mut g, seat, at).unwrap();
        assert!(
            ev.contains(&Event::Passed {
                seat: Seat::new(seat),
                auto: true
            }),
            "seat {seat}: {ev:?}"
        );
        assert!(!ev.iter().any(|e| matches!(e, Event::Escaped { .. })));
    }
    assert!(
        hooks.asked.lock().unwrap().is_empty(),
        "one timeout each is below the limit of 2: the hook is not asked"
    );
    // The trick comes back to N, whose second consecutive timeout reaches the limit: the hook
    // is asked and the escape ends the deal.
    assert_eq!(g.turn(), Some(Seat::new(0)));
    let ev = timeout(&mut g, 0, 5_000).unwrap();
    assert!(
        ev.iter().any(|e| matches!(e, Event::Escaped { .. })),
        "{ev:?}"
    );
    let r = deal_end(&ev).expect("the escape ends the deal");
    assert_eq!(r.escaped, Some(Seat::new(0)));
    assert_eq!(r.outcome, None);
    assert_eq!(g.phase(), Phase::Finished);
    assert_eq!(
        *hooks.asked.lock().unwrap(),
        vec![TimeoutFacts {
            seat: Seat::new(0),
            consecutive_timeouts: 2,
            disconnected: false
        }]
    );
}
