//! Shared helper of the variant-script tests (`tests/variants_*.rs`): the facts of a settled
//! deal to hand to a script.

use shuangkou::game::hooks::{DealFacts, Outcome};

/// The first deal of a four-player game won double (雙扣: places 0 and 2 first and second),
/// the losers holding `cards_left`.
pub fn double_deal(cards_left: Vec<u8>) -> DealFacts {
    DealFacts {
        players: 4,
        deal_number: 1,
        outcome: Outcome::Double,
        places: vec![0, 2, 1, 3],
        cards_left,
        bombs_played: vec![],
        bombs_in_hand: vec![vec![]; 4],
    }
}
