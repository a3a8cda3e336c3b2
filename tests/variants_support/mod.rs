//! Shared helpers of the variant tests (`tests/variants_*.rs`, `tests/rules_seed_cases.rs`): the
//! facts of a settled deal to hand to a script, and simulator settings.

use shuangkou::game::hooks::{DealFacts, Outcome, TableFacts};
use shuangkou::game::sim::SimOptions;

/// Simulator settings with an escape in every game (at a random step), one deal a game.
pub fn escape_every_game() -> SimOptions {
    SimOptions {
        escape_probability: 1.0,
        deals_per_game: 1,
        ..SimOptions::default()
    }
}

/// The first deal of a four-player game won double (雙扣: places 0 and 2 first and second),
/// the losers holding `cards_left`.
pub fn double_deal(cards_left: Vec<u8>) -> DealFacts {
    DealFacts {
        table: TableFacts {
            players: 4,
            deal_number: 1,
            places: shuangkou::seat::Seat::list(&[0, 2, 1, 3]),
            cards_left,
            bombs_played: vec![],
            bombs_in_hand: vec![vec![]; 4],
        },
        outcome: Outcome::Double,
    }
}
