//! Every legal game plays to its end (issue 21, part 1): no option set the schema allows can make
//! a settlement fail, and a deal whose script fails anyway can still be ended.
//!
//! - For every variant, option sets drawn from the whole schema (all maxima, all minima, seeded
//!   random draws) play full matches with bombs, escapes, timeouts and disconnects through the
//!   simulator, which checks every invariant (sum rules, replay hashes…) and reports any hook
//!   failure as a violation. Seeded; a failure names its seed and options.
//! - The `jj` case of the issue (`star_multipliers=100,100,100`, `double_points=100000`, a deal of
//!   bomb-heavy hands played bombs first) ends, its amounts saturated at the host's line limit.
//! - With a script whose settlements throw, the last card of a deal is refused (the game stays as
//!   it was) but leaving is not: the deal ends with no points and the failure recorded.

use std::collections::BTreeMap;
use std::sync::Arc;

use shuangkou::cards::CardSet;
use shuangkou::game::hooks::SATURATED;
use shuangkou::game::sim::{SimOptions, simulate};
use shuangkou::game::{Action, EngineError, Entry, Event, Game, GameConfig, GameError, Phase};
use shuangkou::hand::Declared;
use shuangkou::seat::Seat;
use shuangkou::variants::{self, CompiledVariant, OptionValue, extremes};

const SEED: u64 = 0x21_2026;

fn config(variant: &str, deals: u32) -> GameConfig {
    GameConfig {
        variant: variant.into(),
        version: "test".into(),
        deals,
        turn_ms: Some(1_000),
        max_consecutive_timeouts: 3,
        reconnect_ms: 90_000,
    }
}

#[test]
fn option_sets_from_the_whole_schema_play_full_matches_without_a_script_failure() {
    eprintln!("seed {SEED}");
    let options = SimOptions {
        check: true,
        deals_per_game: 2,
        pass_probability: 0.1,
        escape_probability: 0.2,
        timeout_probability: 0.05,
        disconnect_probability: 0.01,
    };
    for (id, _) in variants::EMBEDDED {
        let compiled = variants::builtin(id).unwrap();
        let (mut played, mut refused) = (0, 0);
        for (k, set) in extremes::option_sets(compiled.options(), SEED, 6)
            .iter()
            .enumerate()
        {
            let Ok(v) = compiled.configure(set) else {
                refused += 1;
                continue;
            };
            let seed = SEED + k as u64;
            let report = simulate(&v, id, 4, seed, options);
            assert!(
                report.violations.is_empty(),
                "{id} (seed {seed}, options {set:?}): {:#?}",
                report.violations
            );
            played += report.deals;
        }
        eprintln!("{id}: {played} deals, {refused} option sets refused");
        assert!(played >= 4 * 4, "{id}: too few option sets were accepted");
    }
}

/// The bomb-heavy hands of a whole deck: three 8-card bombs for every seat.
fn bomb_hands() -> Vec<CardSet> {
    let mut deck: Vec<_> = shuangkou::cards::Card::all().collect();
    deck.sort_by_key(|c| c.rank());
    // Ranks 3..2 have 8 cards each, in rank order, then the 4 jokers.
    let rank = |i: usize| deck[i * 8..(i + 1) * 8].iter().copied();
    let sixes: Vec<_> = rank(3).collect();
    let jokers: Vec<_> = deck[104..].to_vec();
    let hand = |ranks: [usize; 3], extra: &[shuangkou::cards::Card]| -> CardSet {
        ranks
            .into_iter()
            .flat_map(rank)
            .chain(extra.iter().copied())
            .collect()
    };
    vec![
        hand([0, 1, 2], &sixes[0..3]),
        hand([4, 5, 6], &sixes[3..6]),
        hand([7, 8, 9], &[sixes[6], sixes[7], jokers[3]]),
        hand([10, 11, 12], &jokers[0..3]),
    ]
}

/// Bombs first: the largest bomb when leading or able to beat the top, otherwise the weakest
/// lead, or a pass.
fn bombs_first(game: &Game, seat: Seat) -> Action {
    let (plays, can_pass) = game.legal_plays(seat);
    let choice = plays
        .iter()
        .filter(|p| p.hand.is_bomb())
        .max_by_key(|p| p.cards.total())
        .or(if can_pass { None } else { plays.first() });
    match choice {
        None => Action::Pass,
        Some(p) => Action::Play {
            cards: game.hand(seat).take(p.cards).unwrap(),
            declared: Some(Declared {
                kind: p.hand.kind,
                key: p.hand.key(),
            }),
        },
    }
}

#[test]
fn the_jj_case_of_the_issue_plays_to_its_end_with_saturated_amounts() {
    let compiled = variants::builtin("jj").unwrap();
    let set: BTreeMap<String, OptionValue> = [
        (
            "star_multipliers".to_string(),
            OptionValue::IntList(vec![100, 100, 100]),
        ),
        ("double_points".to_string(), OptionValue::Int(100_000)),
    ]
    .into();
    let jj = compiled.configure(&set).unwrap();
    let (mut game, _) = Game::new(config("jj", 1), &jj, [21; 32], Some(bomb_hands()), 0).unwrap();
    let mut bombs = 0;
    for step in 1..=2_000u64 {
        if game.phase() == Phase::Finished {
            break;
        }
        let seat = game.turn().unwrap();
        let player = game.seating()[seat];
        let action = bombs_first(&game, seat);
        game.apply(
            &jj,
            Entry {
                player,
                action,
                at: step,
            },
        )
        .unwrap_or_else(|e| panic!("step {step}: {e}"));
        bombs = game.bombs_played().len().max(bombs);
    }
    assert_eq!(game.phase(), Phase::Finished, "the deal did not end");
    assert!(bombs >= 6, "only {bombs} bombs were played");
    let result = &game.results()[0];
    let cap = 1_000_000_000_000_000; // 10^13 points, in hundredths
    assert!(
        result.settlement.lines.iter().any(|l| l.label == SATURATED),
        "{:?}",
        result.settlement.lines
    );
    assert!(
        result.settlement.scores.iter().all(|s| s.abs() >= cap),
        "{:?}",
        result.settlement.scores
    );
}

/// The embedded classic script with `settle` and `settle_escape` throwing.
fn throwing_classic() -> shuangkou::variants::ScriptVariant {
    let src = variants::EMBEDDED[0]
        .1
        .replace("fn settle(facts, opts)", "fn settle_original(facts, opts)")
        .replace(
            "fn settle_escape(facts, opts)",
            "fn settle_escape_original(facts, opts)",
        );
    let src = format!(
        "{src}\nfn settle(facts, opts) {{ throw \"no table\"; }}\n\
         fn settle_escape(facts, opts) {{ throw \"no escape table\"; }}\n"
    );
    Arc::new(CompiledVariant::compile("broken/classic.rhai", &src, Some("classic")).unwrap())
        .with_defaults()
        .unwrap()
}

#[test]
fn a_deal_whose_settlement_fails_can_still_be_ended_by_leaving() {
    let broken = throwing_classic();
    let (mut game, _) = Game::new(config("classic", 3), &broken, [5; 32], None, 0).unwrap();
    // Play bombs first (then the weakest lead) until an action is refused: the deal's end.
    let mut refused = None;
    for step in 1..=3_000u64 {
        let seat = game.turn().unwrap();
        let entry = Entry {
            player: game.seating()[seat],
            action: bombs_first(&game, seat),
            at: step,
        };
        let before = game.clone();
        if let Err(e) = game.apply(&broken, entry) {
            assert_eq!(game, before, "a refused action changed the game");
            refused = Some(e);
            break;
        }
    }
    let Some(GameError::Engine(EngineError::Hook(h))) = refused else {
        panic!("the deal's end was not refused: {refused:?}")
    };
    assert_eq!(h.hook, "settle");
    // Every seat can still leave; the first one ends the deal (and the match).
    let leaver = game.seating()[game.turn().unwrap()];
    let events = game
        .apply(
            &broken,
            Entry {
                player: leaver,
                action: Action::Leave,
                at: 9_000,
            },
        )
        .expect("leaving a deal whose settlement fails");
    assert!(events.iter().any(|e| matches!(e, Event::MatchEnded { .. })));
    assert_eq!(game.phase(), Phase::Finished);
    let r = &game.results()[0];
    assert_eq!(r.escaped, game.seat_of(leaver));
    assert_eq!(r.settlement.scores, vec![0; 4]);
    assert!(
        r.settlement
            .lines
            .iter()
            .all(|l| l.label == shuangkou::game::table::SETTLEMENT_FAILED
                && l.detail.contains("no escape table")),
        "{:?}",
        r.settlement.lines
    );
    assert_eq!(game.totals(), &[0, 0, 0, 0]);
}
