//! One scripted table per rule of the `heuristic` policy (docs/BOTS.md), each with the contrast
//! case that shows the rule is what decided: it does not overtake a partner's winning trick
//! (unless it goes out); it bombs to stop a 雙扣 against its team and keeps the bomb otherwise;
//! it feeds a partner close to going out, also in 雙明 from the partner's shown hand; it plays a
//! bomb for its points where the variant pays for bombs; it leads a play an opponent cannot go
//! out over; and the search bot is deterministic under a playout budget.

pub mod bot_support;

use bot_support::{Table, act, game};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shuangkou::bot::{Bot, Decision, PlayerView};
use shuangkou::cards::RankCounts;
use shuangkou::game::Game;
use shuangkou::game::hooks::VariantHooks;
use shuangkou::rules::Rules;

fn decide(name: &str, game: &Game, hooks: &dyn VariantHooks) -> Decision {
    let seat = game.turn().expect("a seat to act");
    let view = PlayerView::new(game, seat).expect("view");
    let bot = Bot::named(name, hooks).expect("bot");
    bot.decide(&view, hooks, &mut ChaCha8Rng::seed_from_u64(5))
}

fn played(d: Decision) -> String {
    match d {
        Decision::Pass => "pass".into(),
        Decision::Play(p) => p.cards.to_string(),
    }
}

/// What the `heuristic` bot plays at the table dealt `hands` after `plays` (one a turn).
fn heuristic_after(hooks: &Table, hands: &[&str], plays: &[&str]) -> String {
    let mut g = game(hooks, hands);
    for play in plays {
        act(&mut g, hooks, play);
    }
    played(decide("heuristic", &g, hooks))
}

fn rc(s: &str) -> RankCounts {
    s.parse().unwrap()
}

const FILLER: &str = "3 4 6 8 9 T Q K 5 5 7 7";

#[test]
fn does_not_overtake_a_partner_who_holds_the_trick() {
    let hooks = Table::new(Rules::CLASSIC);
    // Seat 0 (the bot's partner) leads a 9; seat 1 passes; the bot (seat 2) could beat it.
    let hands = ["9 3 4 5 6 8 8", FILLER, "T J K K 4 4", FILLER];
    assert_eq!(heuristic_after(&hooks, &hands, &["9", "pass"]), "pass");
    // The contrast: the same cards against an opponent's 9, it follows.
    let hands = ["3 4 5 6 8 8 Q", "9 3 4 6 8 T", "T J K K 4 4", FILLER];
    assert_ne!(heuristic_after(&hooks, &hands, &["3", "9"]), "pass");
}

#[test]
fn overtakes_a_partner_to_go_out() {
    let hooks = Table::new(Rules::CLASSIC);
    let hands = ["9 3 4 5 6 8 8", FILLER, "K", FILLER];
    assert_eq!(heuristic_after(&hooks, &hands, &["9", "pass"]), "K");
}

#[test]
fn bombs_to_stop_a_double_and_keeps_the_bomb_otherwise() {
    let hooks = Table::new(Rules::CLASSIC);
    // Seat 0 goes out; its partner (seat 2, eleven cards left) plays an A. The bot (seat 3) has
    // no single above A, only the bomb 7 7 7 7: one more opponent out is a 雙扣, so it bombs.
    let bot = "7 7 7 7 4 5 6 9 9 J";
    let plays = ["3", "pass", "A"];
    let hands = ["3", FILLER, "A 3 4 6 8 9 T Q K 5 5 J", bot];
    assert_eq!(heuristic_after(&hooks, &hands, &plays), "7 7 7 7");
    // The contrast: seat 0 is still in (no 雙扣 threat), the A's player is far from out.
    let hands = ["3 8 8 Q", FILLER, "A 3 4 6 8 9 T Q K 5 5 J", bot];
    assert_eq!(heuristic_after(&hooks, &hands, &plays), "pass");
}

#[test]
fn feeds_a_partner_close_to_going_out() {
    let hooks = Table::new(Rules::CLASSIC);
    // The bot leads (seat 0); its partner (seat 2) holds one card. Its own plan would lead the
    // straight 3-7; it leads its weakest single instead.
    let bot = "3 4 5 6 7 9 9 K K";
    let g = game(&hooks, &[bot, FILLER, "Q", FILLER]);
    assert_eq!(played(decide("heuristic", &g, &hooks)), "3");
    let g = game(&hooks, &[bot, FILLER, "Q Q 8 8 J J T", FILLER]);
    assert_eq!(played(decide("heuristic", &g, &hooks)), "3 4 5 6 7");
}

#[test]
fn feeds_the_shown_partner_hand_in_shuangming() {
    let mut hooks = Table::new(Rules::JJ);
    hooks.plain.partners_see_hands = true;
    // 雙明: the bot sees its partner's K K and leads its weakest pair, which the K K beats to go
    // out, rather than the single 3 it would lead to a hidden hand.
    let bot = "3 5 5 7 7 9 T J Q";
    let g = game(&hooks, &[bot, FILLER, "K K", FILLER]);
    assert_eq!(played(decide("heuristic", &g, &hooks)), "5 5");
}

#[test]
fn plays_a_bomb_for_its_points_where_the_variant_pays_for_bombs() {
    // Seat 0 (opponent) leads an A; the bot (seat 1) holds a bomb and nothing above A, nobody
    // is close to going out. Plain scoring: it keeps the bomb. Scoring that pays 5 points a
    // bomb: it plays it.
    let hands = [
        "A 3 4 6 8 9 T Q K 5 5",
        "8 8 8 8 3 4 5 9 J J Q",
        FILLER,
        FILLER,
    ];
    let plain = Table::new(Rules::CLASSIC);
    assert_eq!(heuristic_after(&plain, &hands, &["A"]), "pass");
    let mut paying = Table::new(Rules::CLASSIC);
    paying.bomb_bonus = 500;
    assert_eq!(heuristic_after(&paying, &hands, &["A"]), "8 8 8 8");
}

#[test]
fn does_not_lead_what_a_close_opponent_can_go_out_over() {
    let hooks = Table::new(Rules::CLASSIC);
    // Seat 1 (next, an opponent) holds one card; the bot (seat 0) leads a pair, not a single.
    let g = game(&hooks, &["3 9 9 Q", "K", FILLER, FILLER]);
    let d = decide("heuristic", &g, &hooks);
    assert_eq!(played(d), "9 9");
    // Its partner close instead: it feeds the single.
    let g = game(&hooks, &["3 9 9 Q", FILLER, "K", FILLER]);
    assert_eq!(played(decide("heuristic", &g, &hooks)), "3");
}

#[test]
fn search_is_deterministic_under_a_playout_budget_and_finds_the_winning_play() {
    let hooks = Table::new(Rules::CLASSIC);
    let g = game(
        &hooks,
        &["3 4 5 6 7 9 9 K K", FILLER, "Q Q 8 8 J J T", FILLER],
    );
    let a = decide("search:40", &g, &hooks);
    let b = decide("search:40", &g, &hooks);
    assert_eq!(a, b);
    // A hand that goes out in one play: the search plays it.
    let g = game(&hooks, &["3 4 5 6 7", FILLER, FILLER, FILLER]);
    assert_eq!(
        played(decide("search:40", &g, &hooks)),
        rc("3 4 5 6 7").to_string()
    );
}
