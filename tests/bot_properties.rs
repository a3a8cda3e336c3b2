//! Properties of every bot: over thousands of random mid-deal views each policy's decision is a
//! legal play or a legal pass (checked against the engine's own legal plays and by applying
//! it); and non-interference: two games whose views for the seat to act are equal but whose
//! hidden hands differ give the same decision with the same seed, for every policy.

pub mod bot_support;

use bot_support::{random_state, tables, test_seed};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shuangkou::bot::{Bot, Budget, Decision, Kind, NAMES, PlayerView, styles};
use shuangkou::cards::{Card, CardSet};
use shuangkou::game::testing::PlainHooks;
use shuangkou::game::{Entry, Game};
use shuangkou::seat::Seat;

/// Fast policies are checked on every view; search-based ones (search, chuantong, zhuanmen,
/// laoshou) on every `SEARCH_EVERY`-th view.
const SEARCH_EVERY: u64 = 10;

/// Every named bot; the search-based ones with a small playout budget and no time cap (a time
/// cap makes a decision depend on the machine's speed, and these tests on the seed only).
fn bots(hooks: &PlainHooks) -> Vec<(String, Bot)> {
    let mut out: Vec<(String, Bot)> = NAMES
        .iter()
        .map(|n| {
            let mut spec = styles::spec(n).expect("known bot");
            if spec.kind == Kind::Search {
                spec.budget = Budget {
                    playouts: 6,
                    time_cap: None,
                };
            }
            (n.to_string(), Bot::new(spec, hooks))
        })
        .collect();
    out.push((
        "search:2".into(),
        Bot::named("search:2", hooks).expect("bot"),
    ));
    out
}

fn is_search(b: &Bot) -> bool {
    b.spec().kind == Kind::Search
}

fn check_legal(game: &Game, hooks: &PlainHooks, seat: Seat, d: Decision) -> Result<(), String> {
    let (plays, can_pass) = game.legal_plays(seat);
    let ok = match d {
        Decision::Pass => can_pass,
        Decision::Play(p) => plays.contains(&p),
    };
    if !ok {
        return Err(format!("{d:?} is not legal (can pass: {can_pass})"));
    }
    let action = d.action(game.hand(seat)).ok_or("cards not held")?;
    let mut g = game.clone();
    g.apply(
        hooks,
        Entry {
            player: game.seating()[seat],
            action,
            at: 0,
        },
    )
    .map_err(|e| format!("the engine rejects {d:?}: {e}"))?;
    Ok(())
}

#[test]
fn every_policy_decides_legally_on_random_views() {
    let base = test_seed(1);
    let mut views = 0u64;
    for (rules, shown) in tables() {
        let mut hooks = PlainHooks::new(rules);
        hooks.partners_see_hands = shown;
        let bots = bots(&hooks);
        for i in 0..600u64 {
            let seed = base.wrapping_mul(1_000_003).wrapping_add(i);
            let Some(game) = random_state(&hooks, seed) else {
                continue;
            };
            let seat = game.turn().expect("a seat to act");
            let view = PlayerView::new(&game, seat).expect("view");
            views += 1;
            for (name, bot) in &bots {
                if is_search(bot) && i % SEARCH_EVERY != 0 {
                    continue;
                }
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let d = bot.decide(&view, &hooks, &mut rng);
                if let Err(e) = check_legal(&game, &hooks, seat, d) {
                    panic!(
                        "{name}, rules {rules:?}, state seed {seed} (BOT_TEST_SEED={base}): {e}"
                    );
                }
            }
        }
    }
    assert!(views >= 3000, "only {views} random views");
}

/// The hidden hands redealt: the cards of the seats `seat` cannot see, shuffled among them with
/// the same sizes.
fn redeal_hidden(game: &Game, seat: Seat, rng: &mut ChaCha8Rng) -> Option<Game> {
    let n = game.players();
    let shown = game.partners_see_hands();
    let hidden: Vec<u8> = (0..n)
        .filter(|&s| Seat::new(s) != seat && !(shown && game.partner(seat) == Some(Seat::new(s))))
        .collect();
    let mut pool: Vec<Card> = hidden
        .iter()
        .flat_map(|&s| game.hand(Seat::new(s)).iter())
        .collect();
    pool.shuffle(rng);
    let mut hands: Vec<CardSet> = (0..n).map(|s| game.hand(Seat::new(s))).collect();
    let mut next = pool.into_iter();
    for &s in &hidden {
        let k = game.hand(Seat::new(s)).len();
        hands[s as usize] = next.by_ref().take(k).collect();
    }
    game.with_hands(hands)
}

#[test]
fn decisions_do_not_depend_on_hidden_cards() {
    let base = test_seed(2);
    let mut compared = 0u64;
    let mut differing_hidden = 0u64;
    for (rules, shown) in tables().into_iter().filter(|(r, _)| r.players == 4) {
        let mut hooks = PlainHooks::new(rules);
        hooks.partners_see_hands = shown;
        let bots = bots(&hooks);
        for i in 0..150u64 {
            let seed = base.wrapping_mul(1_000_033).wrapping_add(i);
            let Some(game) = random_state(&hooks, seed) else {
                continue;
            };
            let seat = game.turn().expect("a seat to act");
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xABCD);
            let Some(other) = redeal_hidden(&game, seat, &mut rng) else {
                continue;
            };
            if (0..4).any(|s| game.hand(Seat::new(s)) != other.hand(Seat::new(s))) {
                differing_hidden += 1;
            }
            let v1 = PlayerView::new(&game, seat).expect("view");
            let v2 = PlayerView::new(&other, seat).expect("view");
            assert_eq!(
                v1, v2,
                "views differ (state seed {seed}, BOT_TEST_SEED={base})"
            );
            for (name, bot) in &bots {
                if is_search(bot) && i % 3 != 0 {
                    continue;
                }
                let d1 = bot.decide(&v1, &hooks, &mut ChaCha8Rng::seed_from_u64(seed));
                let d2 = bot.decide(&v2, &hooks, &mut ChaCha8Rng::seed_from_u64(seed));
                assert_eq!(
                    d1, d2,
                    "{name} decided differently with different hidden hands (state seed {seed}, \
                     BOT_TEST_SEED={base})"
                );
                compared += 1;
            }
        }
    }
    assert!(
        differing_hidden >= 200,
        "only {differing_hidden} redeals changed a hand"
    );
    assert!(compared >= 2000, "only {compared} comparisons");
}
