//! Leaving after going out (issue 21, part 2; docs/VARIANTS.md "Leaving after going out"): a
//! player who has gone out and then leaves does not escape. The partner plays on, the deal is
//! settled by the variant's normal table, and the match ends with that deal.
//!
//! Oracle: the classic table of RULES.md (default options, no bomb played): 雙扣 ±4 per player,
//! the first finisher's team winning — not the escape's −12 / +4 / +4 / +4.

use shuangkou::game::{Action, Entry, Event, Game, GameConfig, Phase};
use shuangkou::hand::Declared;
use shuangkou::seat::{Player, Seat};
use shuangkou::variants;

/// Passes whenever it may, otherwise leads its weakest non-bomb play.
fn passive(game: &Game, seat: Seat) -> Action {
    let (plays, can_pass) = game.legal_plays(seat);
    if can_pass {
        return Action::Pass;
    }
    let p = plays
        .iter()
        .find(|p| !p.hand.is_bomb())
        .or(plays.first())
        .expect("a seat that must lead has a play");
    Action::Play {
        cards: game.hand(seat).take(p.cards).unwrap(),
        declared: Some(Declared {
            kind: p.hand.kind,
            key: p.hand.key(),
        }),
    }
}

#[test]
fn leaving_after_going_out_is_not_an_escape_and_the_partner_plays_on() {
    let classic = variants::builtin("classic")
        .unwrap()
        .with_defaults()
        .unwrap();
    let config = GameConfig {
        variant: "classic".into(),
        version: "test".into(),
        deals: 3,
        turn_ms: None,
        max_consecutive_timeouts: 3,
        reconnect_ms: 90_000,
    };
    let (mut game, _) = Game::new(config, &classic, [11; 32], None, 0).unwrap();
    let mut left: Option<Player> = None;
    let mut at = 0;
    while game.results().is_empty() {
        at += 1;
        assert!(at < 3_000, "the deal did not end");
        let seat = game.turn().unwrap();
        let player = game.seating()[seat];
        let events = game
            .apply(
                &classic,
                Entry {
                    player,
                    action: passive(&game, seat),
                    at,
                },
            )
            .unwrap();
        let out = events.iter().find_map(|e| match e {
            Event::PlayerOut { seat, place: 1 } => Some(*seat),
            _ => None,
        });
        if let (Some(out_seat), None) = (out, left) {
            if !game.results().is_empty() {
                break;
            }
            let leaver = game.seating()[out_seat];
            at += 1;
            let events = game
                .apply(
                    &classic,
                    Entry {
                        player: leaver,
                        action: Action::Leave,
                        at,
                    },
                )
                .unwrap();
            assert_eq!(events, vec![Event::Left { seat: out_seat }]);
            assert_eq!(game.phase(), Phase::Playing, "the deal plays on");
            left = Some(leaver);
        }
    }
    let leaver = left.expect("a player went out before the deal ended");
    assert!(game.bombs_played().is_empty(), "the oracle assumes no bomb");
    assert_eq!(
        game.phase(),
        Phase::Finished,
        "the match ends with the deal"
    );
    let r = &game.results()[0];
    assert_eq!(r.escaped, None);
    let first = r.places[0];
    assert_eq!(r.players[first], leaver, "the leaver keeps 1st place");
    // Classic 雙扣 / 單扣 / 平扣 with the default table: 4 / 2 / 0 per player.
    let d = match r.outcome.expect("a normal outcome") {
        shuangkou::game::hooks::Outcome::Double => 400,
        shuangkou::game::hooks::Outcome::Single => 200,
        shuangkou::game::hooks::Outcome::Draw => 0,
    };
    let expected: Vec<i64> = (0..4u8)
        .map(|s| if s % 2 == first.team() { d } else { -d })
        .collect();
    assert_eq!(r.settlement.scores, expected, "{:?}", r.settlement.lines);
    assert!(
        d > 0,
        "a passive partner finishes 2nd or 3rd: the test needs a win"
    );
}
