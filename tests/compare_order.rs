//! The play order of `compare` on classified hands, by hand: the classic bomb order, the star
//! order's specials (三王, 天王 under 百變 and 火拼) and 「線數一樣,誰先出誰大」 (docs/rules/RULES.md
//! §4, §5, §8 #27). Moved out of `src/compare.rs` so that the comparison does not depend on the
//! classification it is used by.

use std::cmp::Ordering;

use shuangkou::classify::classify;
use shuangkou::compare::{beats, play_order};
use shuangkou::hand::Hand;
use shuangkou::rules::{EqualStarBombs, Rules};

fn h(cards: &str, rules: &Rules) -> Hand {
    classify(cards.parse().unwrap(), rules)[0]
}

#[test]
fn classic_bomb_order() {
    let r = Rules::CLASSIC;
    assert!(beats(&h("A A A A", &r), &h("3 3 3 3 3", &r), &r));
    assert!(beats(&h("2 2 2 2 2 2 2 2", &r), &h("SJ SJ BJ BJ", &r), &r));
    assert!(!beats(&h("SJ SJ BJ BJ", &r), &h("2 2 2 2 2 2 2 2", &r), &r));
}

#[test]
fn star_order_specials() {
    let r = Rules::BAIBIAN;
    assert!(beats(&h("SJ SJ BJ", &r), &h("3 3 3 3 3 3", &r), &r));
    assert!(beats(&h("3 3 3 3 3 3 3", &r), &h("SJ SJ BJ BJ", &r), &r));
    let r = Rules::HUOPIN;
    assert!(!beats(&h("3 3 3 3 3 3 3", &r), &h("SJ SJ BJ BJ", &r), &r));
}

#[test]
fn first_stands_needs_a_higher_star_level() {
    // S1's note 「線數一樣,誰先出誰大」: the case, 8×7 after 7×7 (both 7線).
    let tie = Rules::HUOPIN;
    let first = Rules {
        equal_star_bombs: EqualStarBombs::FirstStands,
        ..Rules::HUOPIN
    };
    let sevens = "7 7 7 7 7 7 7";
    let eights = "8 8 8 8 8 8 8";
    assert!(beats(&h(sevens, &tie), &h(eights, &tie), &tie));
    assert!(!beats(&h(sevens, &first), &h(eights, &first), &first));
    // 火拼's 天王 is the smallest 7線: a 4×3 chain (also 7線) beats it only under tiebreak.
    let chain = "4 4 4 4 5 5 5 5 6 6 6 6";
    let tianwang = "SJ SJ BJ BJ";
    assert!(beats(&h(tianwang, &tie), &h(chain, &tie), &tie));
    assert!(!beats(&h(tianwang, &first), &h(chain, &first), &first));
    // A higher level still beats; the sort order is unchanged.
    assert!(beats(
        &h(sevens, &first),
        &h("3 3 3 3 3 3 3 3", &first),
        &first
    ));
    assert_eq!(
        play_order(&h(sevens, &first), &h(eights, &first), &first),
        Ordering::Less
    );
}
