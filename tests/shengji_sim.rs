//! Random simulation of 升級 with every invariant checked after every action (see
//! `shengji::sim`): thousands of deals, 0 violations, and the upgrade, the 摳底 bonus, the next
//! dealer and the match end of every deal checked against the rules text.

use shuangkou::seat::Seat;
use shuangkou::shengji::hooks::{Finish, Side};
use shuangkou::shengji::sim::{SimOptions, match_seed, random_action, simulate};
use shuangkou::shengji::{Event, Game, Level, Setup, ShengjiHooks, StandardHooks};

use rand::SeedableRng;

/// The seed's upgrade table, written out independently of the engine: (side, levels) for P.
fn table(p: u32) -> (Side, u8) {
    // (points below which, side, levels), as the seed lists them.
    const BANDS: [(u32, Side, u8); 7] = [
        (1, Side::Dealer, 3),
        (40, Side::Dealer, 1),
        (60, Side::Opponents, 1),
        (80, Side::Opponents, 2),
        (100, Side::Opponents, 3),
        (120, Side::Opponents, 4),
        (140, Side::Opponents, 5),
    ];
    match BANDS.iter().find(|(below, _, _)| p < *below) {
        Some(&(_, side, levels)) => (side, levels),
        None => (Side::Opponents, 6 + ((p - 140) / 20) as u8),
    }
}

#[test]
fn thousands_of_random_deals_keep_every_invariant() {
    let seed = 20_261_201;
    let mut total = 0;
    for (hooks, matches) in [
        (StandardHooks::default(), 120),
        (
            StandardHooks {
                bury_points: false,
                multiplier: 3,
                finish: Finish::DefendA,
            },
            60,
        ),
    ] {
        let report = simulate(&hooks, seed, matches, SimOptions::default());
        eprintln!("{hooks:?}: {report:?}");
        total += report.deals;
        assert!(
            report.violations.is_empty(),
            "seed {seed}, {hooks:?}: {:#?}",
            report.violations
        );
        // The random driver reaches every branch: declared and undeclared deals, both sides up,
        // 摳底, finished matches.
        assert!(
            report.declared > 0 && report.declared < report.deals,
            "{report:?}"
        );
        assert!(
            report.dealer_kept > 0 && report.dealer_kept < report.deals,
            "{report:?}"
        );
        assert!(
            report.kou_di > 0 && report.finished_matches > 0,
            "{report:?}"
        );
    }
    assert!(total >= 2000, "only {total} deals");
}

/// Every deal's result, checked against the rules text: P = the 閑家's trick points + buried
/// points × 2 when they won the last trick; the upgrade by the table; levels capped at A; the
/// next dealer by the rotation; the match over when a team reaches A.
#[test]
fn every_deal_result_follows_the_rules_text() {
    let hooks = StandardHooks::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(77);
    let (mut deals, mut finished) = (0, 0);
    for index in 0..60 {
        let (mut game, _) = Game::new(Setup::seeded(match_seed(77, index))).unwrap();
        let mut levels = game.levels();
        while let Some(action) = random_action(&game, &hooks, &mut rng, 0.05) {
            let dealer_before = game.dealer();
            let events = game.apply(&hooks, action).unwrap();
            for e in &events {
                let Event::DealEnded(r) = e else { continue };
                deals += 1;
                let ctx = format!("match {index} deal {}: {r:?}", r.deal_number);
                assert_eq!(Some(r.dealer), dealer_before, "{ctx}");
                let opp = 1 - r.dealer.team() as usize;
                let kou = r.last_trick_winner.team() as usize == opp;
                let bonus = if kou { r.buried_points * 2 } else { 0 };
                assert_eq!(r.opponents_points, r.trick_points[opp] + bonus, "{ctx}");
                let (side, n) = table(r.opponents_points);
                assert_eq!((r.upgrade.side, r.upgrade.levels), (side, n), "{ctx}");
                let up = if side == Side::Dealer { 1 - opp } else { opp };
                let mut expect = levels;
                expect[up] = Level::new((levels[up].face() + n).min(14)).unwrap();
                assert_eq!(r.levels_after, expect, "{ctx}");
                if expect[up] == Level::ACE {
                    assert_eq!(r.winner, Some(up as u8), "{ctx}");
                    assert_eq!(r.next_dealer, None, "{ctx}");
                    finished += 1;
                } else {
                    let next = if side == Side::Dealer {
                        r.dealer.number() + 2
                    } else {
                        r.dealer.number() + 1
                    } % 4;
                    assert_eq!(r.next_dealer, Some(Seat::new(next % 4)), "{ctx}");
                    assert_eq!(game.dealer(), Some(Seat::new(next % 4)), "{ctx}");
                }
                levels = r.levels_after;
            }
            if game.deal_number() > 60 {
                break;
            }
        }
    }
    assert!(
        deals > 300 && finished > 10,
        "{deals} deals, {finished} matches finished"
    );
}

/// Two runs of the same seed give the same states; another seed gives another deal.
#[test]
fn the_seed_determines_the_match() {
    let hooks = StandardHooks::default();
    let run = |seed: [u8; 32]| {
        let (mut g, _) = Game::new(Setup::seeded(seed)).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut hashes = vec![g.state_hash()];
        for _ in 0..400 {
            let Some(a) = random_action(&g, &hooks as &dyn ShengjiHooks, &mut rng, 0.05) else {
                break;
            };
            g.apply(&hooks, a).unwrap();
            hashes.push(g.state_hash());
        }
        (g.deck().to_vec(), hashes)
    };
    let a = run([3; 32]);
    assert_eq!(a, run([3; 32]));
    assert_ne!(a.0, run([4; 32]).0);
}
