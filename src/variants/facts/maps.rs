//! The hook inputs of `game::hooks` as the Rhai maps the scripts receive.
//!
//! The maps mirror the serde shapes of the structs field for field (`Option::None` is `()`;
//! enums are their snake_case names; rank multisets are notation strings such as
//! `"7 7 7 7 BJ"`; the shown card is `#{ id, rank, suit }`), except bombs: a bomb is the script
//! type `Bomb` (the `BombFact` itself, with the same properties, read-only; see
//! `engine::shuangkou::register_bomb`). The seating `random` is the facts'
//! `u64` with its top bit cleared, so that it is a non-negative Rhai integer (values below 2^63
//! pass unchanged). Depends on the core's fact types and `rhai` only.

use rhai::{Array, Dynamic, Map};

use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, Seat, SeatingFacts, TableFacts, TimeoutFacts,
};

fn int(i: impl Into<i64>) -> Dynamic {
    Dynamic::from_int(i.into())
}

fn seats(v: &[Seat]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|s| int(*s)).collect())
}

fn opt_seat(s: Option<Seat>) -> Dynamic {
    s.map_or(Dynamic::UNIT, int)
}

/// A bomb is the core's `BombFact` itself, the script type `Bomb` (see `engine`).
fn bomb(b: &BombFact) -> Dynamic {
    Dynamic::from(*b)
}

fn bombs(v: &[BombFact]) -> Dynamic {
    Dynamic::from_array(v.iter().map(bomb).collect())
}

fn bombs_by_seat(v: &[Vec<BombFact>]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|b| bombs(b)).collect())
}

fn cards_left(v: &[u8]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|n| int(*n)).collect::<Array>())
}

/// The entries `DealFacts` and `EscapeFacts` share, their `TableFacts`: players, deal number,
/// places, cards left, the bombs played and those in hand.
fn table_map(t: &TableFacts) -> Map {
    let mut m = Map::new();
    m.insert("players".into(), int(t.players));
    m.insert("deal_number".into(), int(t.deal_number));
    m.insert("places".into(), seats(&t.places));
    m.insert("cards_left".into(), cards_left(&t.cards_left));
    m.insert("bombs_played".into(), bombs(&t.bombs_played));
    m.insert("bombs_in_hand".into(), bombs_by_seat(&t.bombs_in_hand));
    m
}

/// `DealFacts` as the `facts` map of `settle`.
pub fn deal_map(f: &DealFacts) -> Dynamic {
    let mut m = table_map(&f.table);
    m.insert("outcome".into(), Dynamic::from(f.outcome.name()));
    Dynamic::from_map(m)
}

/// `EscapeFacts` as the `facts` map of `settle_escape`.
pub fn escape_map(f: &EscapeFacts) -> Dynamic {
    let mut m = table_map(&f.table);
    m.insert("escaper".into(), int(f.escaper));
    m.insert("reason".into(), Dynamic::from(f.reason.name()));
    Dynamic::from_map(m)
}

/// `SeatingFacts` as the `facts` map of `seating`.
pub fn seating_map(f: &SeatingFacts) -> Dynamic {
    let mut card = Map::new();
    card.insert("id".into(), int(f.shown_card.id()));
    card.insert("rank".into(), Dynamic::from(f.shown_card.rank().symbol()));
    card.insert(
        "suit".into(),
        f.shown_card
            .suit()
            .map_or(Dynamic::UNIT, |s| Dynamic::from(s.letter().to_string())),
    );
    let previous = match &f.previous {
        None => Dynamic::UNIT,
        Some(p) => {
            let mut pm = Map::new();
            pm.insert(
                "outcome".into(),
                p.outcome.map_or(Dynamic::UNIT, |o| Dynamic::from(o.name())),
            );
            pm.insert("places".into(), seats(&p.places));
            pm.insert("escaped".into(), opt_seat(p.escaped));
            Dynamic::from_map(pm)
        }
    };
    let mut m = Map::new();
    m.insert("players".into(), int(f.players));
    m.insert("deal_number".into(), int(f.deal_number));
    m.insert("shown_card".into(), Dynamic::from_map(card));
    m.insert(
        "shown_holders".into(),
        Dynamic::from_array(f.shown_holders.iter().map(|s| opt_seat(*s)).collect()),
    );
    m.insert("previous".into(), previous);
    m.insert("random".into(), int((f.random & i64::MAX as u64) as i64));
    Dynamic::from_map(m)
}

/// `TimeoutFacts` as the `facts` map of `timeout_is_escape`.
pub fn timeout_map(f: &TimeoutFacts) -> Dynamic {
    let mut m = Map::new();
    m.insert("seat".into(), int(f.seat));
    m.insert("consecutive_timeouts".into(), int(f.consecutive_timeouts));
    m.insert("disconnected".into(), Dynamic::from_bool(f.disconnected));
    Dynamic::from_map(m)
}
