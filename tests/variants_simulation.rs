//! The variant scripts in real play: random legal games of the deal engine (`game::sim`, every
//! invariant checked after every step, settlements under the declared sum rule, escapes
//! included) for all six scripts under their default options and under the non-default options
//! docs/rules/RULES.md §8 exposes; and a script whose hook fails inside a live game: the action is
//! rejected and the game stays exactly as it was.
//!
//! The default-option run of each script is also in `tests/game_sim.rs`; this file covers the
//! option matrix and the failure path. `SHUANGKOU_THOROUGH=1` plays ten times as many deals.

pub mod variants_support;

#[path = "common/flags.rs"]
pub mod flags;

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::EngineError;
use shuangkou::game::hooks::VariantHooks;
use shuangkou::game::sim::{SimOptions, simulate};
use shuangkou::game::table::{Action, Entry, Game, GameConfig, GameError, Phase};
use shuangkou::hand::Declared;
use shuangkou::variants::{self, CompiledVariant, ScriptVariant};

fn deals(base: u64) -> u64 {
    if flags::thorough() { base * 10 } else { base }
}

fn configured(id: &str, pairs: &[&str]) -> ScriptVariant {
    let c = variants::builtin(id).unwrap();
    let o = c
        .parse_overrides(&pairs.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap();
    c.configure(&o)
        .unwrap_or_else(|e| panic!("{id} {pairs:?}: {e}"))
}

#[test]
fn every_script_under_its_section_8_options_keeps_every_invariant() {
    let matrix: &[(&str, &[&str])] = &[
        ("classic", &["rake_percent=5"]),
        (
            "classic",
            &["escape_rule=escaper_only", "first_leader=seat0"],
        ),
        ("jj", &["single_points=4", "accumulate=per_level"]),
        (
            "jj",
            &[
                "tianwang=min_of_7",
                "cyclic_chain_bombs=true",
                "rake_percent=2.5",
            ],
        ),
        ("baibian", &["draw_points=1,-1,-1,1", "rake_percent=5"]),
        (
            "baibian",
            &[
                "multiplier_cap_star=12",
                "contribution_each=3,6,10,20,40,80,160",
                "aggregate_lines=true",
            ],
        ),
        (
            "baibian",
            &["wild_jokers=all", "equal_star_tie_break=larger_group"],
        ),
        ("huopin", &["tianwang=max_of_8", "escape_rule=escaper_only"]),
        (
            "qianbian",
            &[
                "unequal_chain_level=min_plus_links",
                "min_naturals_in_sequence=2",
            ],
        ),
        (
            "erren",
            &[
                "multiplier_from_xiang=5",
                "escape_result=double",
                "unit_points=10",
            ],
        ),
        (
            "erren",
            &[
                "contribution_in_hand=false",
                "rake_percent=5",
                "double_min_cards=11",
                "single_min_cards=5",
            ],
        ),
    ];
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for (i, (id, opts)) in matrix.iter().enumerate() {
        let hooks = configured(id, opts);
        let seed = 7000 + i as u64;
        let report = simulate(&hooks, id, deals(40), seed, SimOptions::default());
        assert!(
            report.violations.is_empty(),
            "{id} {opts:?} (seed {seed}): {:#?}",
            report.violations
        );
        for (k, n) in report.outcomes {
            *outcomes.entry(k).or_default() += n;
        }
    }
    eprintln!("outcomes over the matrix: {outcomes:?}");
}

#[test]
fn escapes_in_real_play_settle_under_the_sum_rule() {
    let options = variants_support::escape_every_game();
    for (i, (id, _)) in variants::EMBEDDED.iter().enumerate() {
        let hooks = variants::builtin(id).unwrap().with_defaults().unwrap();
        let report = simulate(&hooks, id, deals(6), 9100 + i as u64, options);
        assert!(
            report.violations.is_empty(),
            "{id}: {:#?}",
            report.violations
        );
    }
}

/// The embedded classic script with `settle` replaced by `body`.
fn broken_classic(body: &str) -> ScriptVariant {
    let src = variants::EMBEDDED[0]
        .1
        .replace("fn settle(facts, opts)", "fn settle_original(facts, opts)");
    let src = format!("{src}\nfn settle(facts, opts) {{ {body} }}\n");
    Arc::new(CompiledVariant::compile("broken/classic.rhai", &src, Some("classic")).unwrap())
        .with_defaults()
        .unwrap()
}

/// Plays random legal actions with `hooks` until an action fails; returns the game before that
/// action, the action and the error.
fn play_until_failure(hooks: &dyn VariantHooks, seed: u64) -> (Game, Entry, GameError) {
    let config = GameConfig::new("classic", "broken", 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut game, _) = Game::new(config, hooks, [7; 32], None, 0).unwrap();
    for step in 0..5_000u64 {
        assert_eq!(
            game.phase(),
            Phase::Playing,
            "the deal ended without settling"
        );
        let seat = game.turn().unwrap();
        let player = game.seating()[seat];
        let (plays, can_pass) = game.legal_plays(seat);
        // Prefer big plays so that the deal ends soon.
        let action = if can_pass && (plays.is_empty() || rng.random_bool(0.2)) {
            Action::Pass
        } else {
            let p = plays.choose(&mut rng).unwrap();
            Action::Play {
                cards: game.hand(seat).take(p.cards).unwrap(),
                declared: Some(Declared {
                    kind: p.hand.kind,
                    key: p.hand.key(),
                }),
            }
        };
        let entry = Entry {
            player,
            action,
            at: step,
        };
        let before = game.clone();
        match game.apply(hooks, entry) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(game, before, "a rejected action changed the game");
                return (game, entry, e);
            }
        }
    }
    panic!("no deal end within 5000 actions");
}

#[test]
fn a_failing_settlement_rejects_the_action_and_leaves_the_game_unchanged() {
    let good = variants::builtin("classic")
        .unwrap()
        .with_defaults()
        .unwrap();
    for (k, body) in [
        "throw \"the settlement table is missing\";",
        "let n = 0; loop { n += 1; }",
        "42",
    ]
    .iter()
    .enumerate()
    {
        let broken = broken_classic(body);
        let (game, entry, err) = play_until_failure(&broken, 40 + k as u64);
        let GameError::Engine(EngineError::Hook(hook)) = &err else {
            panic!("{body}: expected a hook error, got {err}")
        };
        assert_eq!(hook.hook, "settle", "{err}");
        assert!(
            hook.location
                .as_deref()
                .is_some_and(|l| l.starts_with("broken/classic.rhai")),
            "{hook:?}"
        );
        let hash = game.state_hash();
        // Retrying with the broken version fails the same way and still changes nothing.
        let mut again = game.clone();
        assert!(again.apply(&broken, entry).is_err());
        assert_eq!(again.state_hash(), hash);
        // The same action goes through with a working version of the variant.
        let mut fixed = game.clone();
        let events = fixed.apply(&good, entry).unwrap();
        assert!(!events.is_empty());
        assert_eq!(fixed.results().len(), 1, "{body}: the deal is settled");
    }
}
