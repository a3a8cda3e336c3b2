//! The Shuangkou family's script types in the shared engine: a bomb in the facts is the core's
//! `BombFact` itself, the script type `Bomb`. Registered by the engine's `build`; 升級's scripts
//! see only maps and need no type of their own.

use rhai::{Dynamic, Engine, EvalAltResult, Map};

use crate::game::hooks::BombFact;

/// The keys of a bomb, as the scripts read them (`b.seat`, `b["seat"]`).
pub const BOMB_KEYS: [&str; 7] = ["seat", "kind", "cards", "len", "stars", "group", "links"];

/// One property of a bomb as a script value.
fn bomb_property(b: &BombFact, key: &str) -> Option<Dynamic> {
    let int = |v: u8| Dynamic::from_int(i64::from(v));
    Some(match key {
        "seat" => int(b.seat.number()),
        "kind" => Dynamic::from(b.kind.name()),
        "cards" => Dynamic::from(b.cards.to_string()),
        "len" => int(b.len),
        "stars" => b.stars.map_or(Dynamic::UNIT, int),
        "group" => int(b.group),
        "links" => int(b.links),
        _ => return None,
    })
}

/// A bomb in the facts is the core's `BombFact` itself, a script type named `Bomb` with read-only
/// properties `seat`, `kind`, `cards`, `len`, `stars`, `group`, `links` (also readable as
/// `b["stars"]`), `to_map()` and a map-like `to_string()`. A value rather than an object map:
/// copying one (a `for` loop, an argument, `top = b`) copies 16 bytes instead of a seven-entry
/// map, and `cards` is written out only when a script reads it.
pub(super) fn register_bomb(engine: &mut Engine) {
    fn int(v: u8) -> rhai::INT {
        rhai::INT::from(v)
    }
    fn to_map(b: &mut BombFact) -> Map {
        BOMB_KEYS
            .iter()
            .filter_map(|k| Some(((*k).into(), bomb_property(b, k)?)))
            .collect()
    }
    fn show(b: &mut BombFact) -> String {
        let stars = b.stars.map_or("()".to_string(), |s| s.to_string());
        format!(
            "#{{cards: \"{}\", group: {}, kind: \"{}\", len: {}, links: {}, seat: {}, stars: {stars}}}",
            b.cards,
            b.group,
            b.kind.name(),
            b.len,
            b.links,
            b.seat
        )
    }
    engine
        .register_type_with_name::<BombFact>("Bomb")
        .register_get("seat", |b: &mut BombFact| int(b.seat.number()))
        .register_get("kind", |b: &mut BombFact| b.kind.name())
        .register_get("cards", |b: &mut BombFact| b.cards.to_string())
        .register_get("len", |b: &mut BombFact| int(b.len))
        .register_get("stars", |b: &mut BombFact| {
            b.stars.map_or(Dynamic::UNIT, |s| Dynamic::from_int(int(s)))
        })
        .register_get("group", |b: &mut BombFact| int(b.group))
        .register_get("links", |b: &mut BombFact| int(b.links))
        .register_indexer_get(
            |b: &mut BombFact, key: &str| -> Result<Dynamic, Box<EvalAltResult>> {
                bomb_property(b, key).ok_or_else(|| {
                    format!(
                        "a bomb has no property `{key}` (it has {})",
                        BOMB_KEYS.join(", ")
                    )
                    .into()
                })
            },
        )
        .register_fn("to_map", to_map)
        .register_fn("to_string", show)
        .register_fn("to_debug", show);
}
