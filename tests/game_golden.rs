//! Golden playthroughs: full seeded deals per player count, each step with the acting seat, the
//! action, the number of legal plays and the state hash, then each deal's places and outcome.
//! Any change to dealing, seating, rules, enumeration or state fails loudly here. They are change
//! detectors, not oracles: the code wrote them, and each file says so in its first line.
//!
//! Regenerate (after a deliberate change, and say why in the commit):
//! `UPDATE_GOLDEN=1 cargo test --test game_golden`.

#[path = "common/flags.rs"]
pub mod flags;

use std::fmt::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::game::testing::PlainHooks;
use shuangkou::game::{Action, Entry, Event, Game, GameConfig, Phase};
use shuangkou::hand::Declared;
use shuangkou::rules::Rules;

/// The first line of every golden file: these files record what the code did, so they catch a
/// change, not an error (the oracles are the hand-written vectors and the brute-force references).
const CHANGE_DETECTOR: &str = "# change detector, not an oracle: written by tests/game_golden.rs itself (UPDATE_GOLDEN=1); a difference means the behaviour changed, not that either version is right";

fn playthrough(rules: Rules, seed: u64, deals: u32) -> String {
    let hooks = PlainHooks::new(rules);
    let cfg = GameConfig::new("golden", "golden", deals);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = [0u8; 32];
    rng.fill(&mut s);
    let (mut g, _) = Game::new(cfg, &hooks, s, None, 0).unwrap();
    let mut out = String::new();
    let _ = writeln!(out, "{CHANGE_DETECTOR}");
    let _ = writeln!(
        out,
        "# seed {seed}, {} players, {deals} deals; step | seat | action | legal plays | state hash",
        g.players()
    );
    let _ = writeln!(
        out,
        "deal 1 seating {:?} leader {} shown {}",
        g.seating(),
        g.turn().unwrap(),
        g.shown_card()
    );
    let mut step = 0;
    while g.phase() == Phase::Playing {
        step += 1;
        let seat = g.turn().unwrap();
        let (plays, can_pass) = g.legal_plays(seat);
        let player = g.seating()[seat];
        let (action, text) = if can_pass && (plays.is_empty() || rng.random_bool(0.35)) {
            (Action::Pass, "pass".to_string())
        } else {
            let p = plays[rng.random_range(0..plays.len())];
            let cards = g.hand(seat).take(p.cards).unwrap();
            let declared = Some(Declared {
                kind: p.hand.kind,
                key: p.hand.key(),
            });
            (
                Action::Play { cards, declared },
                format!("{} {}", p.hand.kind, p.cards),
            )
        };
        let events = g
            .apply(
                &hooks,
                Entry {
                    player,
                    action,
                    at: 0,
                },
            )
            .unwrap();
        let _ = writeln!(
            out,
            "{step} | {seat} | {text} | {} | {}",
            plays.len() + usize::from(can_pass),
            &g.state_hash()[..16]
        );
        for e in events {
            match e {
                Event::DealEnded(r) => {
                    let _ = writeln!(
                        out,
                        "deal {} ended: places {:?} outcome {:?} scores {:?}",
                        r.deal_number, r.places, r.outcome, r.settlement.scores
                    );
                }
                Event::DealStarted {
                    deal_number,
                    players,
                    leader,
                    shown_card,
                    ..
                } => {
                    let _ = writeln!(
                        out,
                        "deal {deal_number} seating {players:?} leader {leader} shown {shown_card}"
                    );
                }
                _ => {}
            }
        }
    }
    let _ = writeln!(out, "final totals {:?}", g.totals());
    out
}

fn check(name: &str, got: String) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    if flags::update_golden() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (UPDATE_GOLDEN=1 creates it)"));
    if want != got {
        let (i, (w, g)) = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .find(|(_, (w, g))| w != g)
            .unwrap_or((0, ("<length differs>", "<length differs>")));
        panic!(
            "{name} differs at line {}:\n  golden: {w}\n  now:    {g}",
            i + 1
        );
    }
}

#[test]
fn four_player_playthrough() {
    check("golden_4p.txt", playthrough(Rules::BAIBIAN, 20261129, 3));
}

#[test]
fn four_player_classic_playthrough() {
    check("golden_4p_classic.txt", playthrough(Rules::CLASSIC, 42, 2));
}

#[test]
fn two_player_playthrough() {
    check("golden_2p.txt", playthrough(Rules::ERREN, 7, 3));
}
