//! OpenSpiel-style random-simulation tests: random legal games for every variant (through the
//! real scripts) and for a matrix of rule options (through the plain test hooks), checking every
//! invariant of `game::sim` after every step, with timeouts, disconnects, expired reconnect
//! windows and escapes among the actions. Failures name the seed that reproduces them.
//! `SHUANGKOU_THOROUGH=1` plays ten times as many deals.

#[path = "common/flags.rs"]
pub mod flags;

use shuangkou::game::sim::{SimOptions, simulate};
use shuangkou::game::testing::PlainHooks;
use shuangkou::rules::{
    ChainBombs, EqualStarTieBreak, Rules, TianWang, UnequalChainLevel, WildJokers,
};

fn deals(base: u64) -> u64 {
    if flags::thorough() { base * 10 } else { base }
}

#[test]
fn every_variant_script_keeps_every_invariant() {
    for (i, id) in ["classic", "jj", "baibian", "huopin", "qianbian", "erren"]
        .iter()
        .enumerate()
    {
        let hooks = shuangkou::variants::builtin(id)
            .unwrap()
            .with_defaults()
            .unwrap();
        let seed = 1000 + i as u64;
        let report = simulate(&hooks, id, deals(DEALS), seed, SimOptions::default());
        assert!(
            report.violations.is_empty(),
            "{id} (seed {seed}): {:#?}",
            report.violations
        );
        assert!(report.deals >= deals(DEALS), "{id}: {} deals", report.deals);
        // The table's other events happened, not only plays and passes.
        let escapes = report.outcomes.get("escape").copied().unwrap_or(0);
        for (what, n) in [
            ("timeouts", report.timeouts),
            ("disconnects", report.disconnects),
            ("reconnects", report.reconnects),
            ("expired windows", report.expired),
            ("escapes", escapes),
        ] {
            assert!(
                n > 0,
                "{id} (seed {seed}): no {what} in {} deals",
                report.deals
            );
        }
        eprintln!(
            "{id}: {} deals, {} actions, {} timeouts, {} disconnects, {} reconnects, {} expired, \
             outcomes {:?}",
            report.deals,
            report.actions,
            report.timeouts,
            report.disconnects,
            report.reconnects,
            report.expired,
            report.outcomes
        );
    }
}

/// Deals per variant script (a few hundred: enough for the rare paths above to occur).
const DEALS: u64 = 200;

#[test]
fn option_matrix_keeps_every_invariant() {
    let base = [
        Rules::CLASSIC,
        Rules::BAIBIAN,
        Rules::QIANBIAN,
        Rules::ERREN,
    ];
    let mut matrix: Vec<(String, Rules)> = Vec::new();
    for r in base {
        matrix.push((format!("{:?}", r.wild_jokers), r));
    }
    let b = Rules::BAIBIAN;
    matrix.push((
        "cyclic".into(),
        Rules {
            cyclic_chain_bombs: true,
            ..b
        },
    ));
    matrix.push((
        "tianwang min7".into(),
        Rules {
            tianwang: TianWang::MinOf7,
            ..b
        },
    ));
    matrix.push((
        "tianwang max8".into(),
        Rules {
            tianwang: TianWang::MaxOf8,
            ..b
        },
    ));
    matrix.push((
        "tianwang above".into(),
        Rules {
            tianwang: TianWang::AboveAll,
            ..b
        },
    ));
    matrix.push((
        "larger group".into(),
        Rules {
            equal_star_tie_break: EqualStarTieBreak::LargerGroup,
            ..b
        },
    ));
    matrix.push((
        "unequal min+links, all wild, cyclic".into(),
        Rules {
            chain_bombs: ChainBombs::Unequal,
            unequal_chain_level: UnequalChainLevel::MinPlusLinks,
            wild_jokers: WildJokers::All,
            cyclic_chain_bombs: true,
            ..b
        },
    ));
    matrix.push((
        "two naturals in sequences".into(),
        Rules {
            min_naturals_in_sequence: 2,
            ..Rules::QIANBIAN
        },
    ));
    matrix.push((
        "no big-as-small".into(),
        Rules {
            big_joker_as_small: false,
            ..b
        },
    ));
    for (i, (name, rules)) in matrix.into_iter().enumerate() {
        rules.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut hooks = PlainHooks::new(rules);
        hooks.partners_see_hands = i % 2 == 0;
        let seed = 7000 + i as u64;
        let report = simulate(&hooks, &name, deals(20), seed, SimOptions::default());
        assert!(
            report.violations.is_empty(),
            "{name} (seed {seed}): {:#?}",
            report.violations
        );
    }
}
