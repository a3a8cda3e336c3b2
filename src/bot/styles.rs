//! Named bots: the four policies and the six player styles of seed 000 (「幾種心态」) as
//! parameter sets over them. `docs/BOTS.md` gives each style's seed sentence and why its
//! parameters follow it. Pure data.

use std::time::Duration;

use super::{BotSpec, Budget, Kind, Params};

/// Every name [`spec`] accepts (plus `search:N`).
pub const NAMES: [&str; 10] = [
    "basic",
    "greedy",
    "heuristic",
    "search",
    "pingfan",
    "sasa",
    "chuantong",
    "zhuanmen",
    "laoshou",
    "douqi",
];

/// The seed's name of a player style (docs/BOTS.md: 平凡型, 灑脫型, 傳統型, 專門型, 老手型, 鬥氣型);
/// `None` for the plain policies and unknown names.
pub fn seed_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "pingfan" => "平凡型",
        "sasa" => "灑脫型",
        "chuantong" => "傳統型",
        "zhuanmen" => "專門型",
        "laoshou" => "老手型",
        "douqi" => "鬥氣型",
        _ => return None,
    })
}

/// The default search budget: playouts per decision and the wall-clock cap.
pub const SEARCH_BUDGET: Budget = Budget {
    playouts: 400,
    time_cap: Some(Duration::from_millis(250)),
};

/// Most playouts a `search:N` name may ask for.
pub const MAX_PLAYOUTS: u32 = 5_000;

/// A bot name that is not known.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BotError {
    #[error("unknown bot {0:?} (known: {names}, search:N)", names = NAMES.join(", "))]
    Unknown(String),
    #[error("search:N needs 1..={MAX_PLAYOUTS} playouts, not {0:?}")]
    Playouts(String),
}

const NO_SEARCH: Budget = Budget {
    playouts: 0,
    time_cap: None,
};

fn policy(name: &'static str, kind: Kind, params: Params, budget: Budget) -> BotSpec {
    BotSpec {
        name,
        kind,
        params,
        budget,
    }
}

/// The spec of a named bot.
pub fn spec(name: &str) -> Result<BotSpec, BotError> {
    let std = Params::STANDARD;
    if let Some(n) = name.strip_prefix("search:") {
        let playouts: u32 = n
            .parse()
            .ok()
            .filter(|p| (1..=MAX_PLAYOUTS).contains(p))
            .ok_or_else(|| BotError::Playouts(n.to_string()))?;
        let budget = Budget {
            playouts,
            time_cap: None,
        };
        return Ok(policy("search", Kind::Search, std, budget));
    }
    Ok(match name {
        "basic" => policy("basic", Kind::Basic, std, NO_SEARCH),
        "greedy" => policy("greedy", Kind::Greedy, std, NO_SEARCH),
        "heuristic" => policy("heuristic", Kind::Heuristic, std, NO_SEARCH),
        "search" => policy("search", Kind::Search, std, SEARCH_BUDGET),
        // 平凡型: by the book, forgiving, not result-driven: the heuristic, partner always
        // supported, little card memory, slow to bomb.
        "pingfan" => policy(
            "pingfan",
            Kind::Heuristic,
            Params {
                aggression: 0.2,
                bomb_threshold: 4,
                memory: 0.3,
                ..std
            },
            NO_SEARCH,
        ),
        // 灑脫型: plays for fun, careless of the result: a careless decision one time in four,
        // no memory, half-hearted partnership.
        "sasa" => policy(
            "sasa",
            Kind::Heuristic,
            Params {
                aggression: 0.5,
                support: 0.5,
                memory: 0.0,
                noise: 0.25,
                ..std
            },
            NO_SEARCH,
        ),
        // 傳統型: steady, careful, slow, very result-minded: search with a long think, bombs
        // kept for need.
        "chuantong" => policy(
            "chuantong",
            Kind::Search,
            Params {
                aggression: 0.1,
                bomb_threshold: 4,
                memory: 0.7,
                ..std
            },
            Budget {
                playouts: 800,
                time_cap: Some(Duration::from_millis(600)),
            },
        ),
        // 專門型: expert with 記牌, exacting with the partner: full memory, quick search.
        "zhuanmen" => policy(
            "zhuanmen",
            Kind::Search,
            Params {
                aggression: 0.4,
                support: 0.8,
                ..std
            },
            Budget {
                playouts: 100,
                time_cap: Some(Duration::from_millis(150)),
            },
        ),
        // 老手型: memory plus technique, steady, precise, ruthless, tolerant: the default search.
        "laoshou" => policy(
            "laoshou",
            Kind::Search,
            Params {
                bomb_threshold: 7,
                ..std
            },
            SEARCH_BUDGET,
        ),
        // 鬥氣型: tilts after lost deals, reckless, bombs at every chance.
        "douqi" => policy(
            "douqi",
            Kind::Heuristic,
            Params {
                aggression: 0.8,
                bomb_eager: true,
                bomb_threshold: 12,
                support: 0.6,
                memory: 0.2,
                noise: 0.1,
                tilt: 0.25,
            },
            NO_SEARCH,
        ),
        other => return Err(BotError::Unknown(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_and_unknown_names_are_typed_errors() {
        for n in NAMES {
            assert_eq!(spec(n).unwrap().name, n.split(':').next().unwrap());
        }
        assert_eq!(spec("search:12").unwrap().budget.playouts, 12);
        assert!(matches!(spec("search:0"), Err(BotError::Playouts(_))));
        assert!(matches!(spec("search:x"), Err(BotError::Playouts(_))));
        assert!(matches!(spec("nobody"), Err(BotError::Unknown(_))));
    }

    #[test]
    fn a_bots_label_reads_back_as_the_same_bot() {
        for n in NAMES
            .iter()
            .copied()
            .chain(["search:1", "search:40", "search:400"])
        {
            let s = spec(n).unwrap();
            assert_eq!(s.label(), n, "the label of {n}");
            assert_eq!(spec(&s.label()).unwrap(), s, "{n} reads back");
        }
    }
}
