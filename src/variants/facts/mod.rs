//! Facts in and out of scripts, by concern: `maps` (the hook inputs of `game::hooks` as Rhai
//! maps), `input` (the JSON form operators write, with shorthands), `random` (seeded random
//! facts for a variant's self-check) and `heavy` (the heaviest deals the deck allows, for the
//! worst-case check). This module only declares them and re-exports their items
//! under `variants::facts`.

mod heavy;
mod input;
mod maps;
mod random;

pub use heavy::{heavy_bomb_sets, heavy_deals, heavy_escapes};
pub use input::{bomb_fact, parse_deal, parse_escape, parse_seating, parse_timeout};
pub use maps::{deal_map, escape_map, seating_map, timeout_map};
pub use random::RandomFacts;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::game::hooks::Outcome;

    #[test]
    fn shorthand_deal_facts_expand() {
        let rules = crate::variants::builtin_rules("baibian").unwrap();
        let v =
            json!({"places": [0, 2, 1, 3], "bombs_played": [{"seat": 0, "cards": "7 7 7 7 7 BJ"}]});
        let f = parse_deal(&v, &rules).unwrap();
        assert_eq!(f.outcome, Outcome::Double);
        assert_eq!(f.table.bombs_played[0].stars, Some(6));
        assert_eq!(f.table.bombs_in_hand.len(), 4);
        let bad = json!({"places": [0, 2, 1, 3], "outcome": "single"});
        assert!(
            parse_deal(&bad, &rules)
                .unwrap_err()
                .contains("contradicts")
        );
        let bad = json!({"places": [0, 2, 1, 3], "extra": 1});
        assert!(parse_deal(&bad, &rules).unwrap_err().contains("extra"));
    }

    #[test]
    fn random_facts_are_coherent() {
        for id in ["classic", "baibian", "qianbian", "erren"] {
            let rules = crate::variants::builtin_rules(id).unwrap();
            let mut g = RandomFacts::new(7, rules);
            for _ in 0..200 {
                let d = g.deal();
                let v = serde_json::to_value(&d).unwrap();
                assert_eq!(parse_deal(&v, &rules).unwrap(), d, "{id}: {v}");
                let e = g.escape();
                let v = serde_json::to_value(&e).unwrap();
                assert_eq!(parse_escape(&v, &rules).unwrap(), e, "{id}: {v}");
                let s = g.seating();
                let v = serde_json::to_value(&s).unwrap();
                assert_eq!(parse_seating(&v, &rules).unwrap(), s, "{id}: {v}");
            }
        }
    }
}
