//! The JSON form of the hook inputs that operators write (`variants settle`, script examples,
//! test data), with shorthands: outcome derived from the places, a bomb written by its cards.
//! Depends on the core (`hand` classifies shorthand bombs) and `serde_json`.

use serde_json::{Value, json};

use crate::cards::RankCounts;
use crate::classify;
use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, Outcome, Seat, SeatingFacts, TimeoutFacts,
};
use crate::rules::Rules;

/// A bomb from its cards: classified under `rules`; the strongest bomb interpretation is taken.
pub fn bomb_fact(seat: Seat, cards: RankCounts, rules: &Rules) -> Result<BombFact, String> {
    let interpretations = classify::classify(cards, rules);
    let h = interpretations
        .iter()
        .find(|h| h.is_bomb())
        .ok_or_else(|| format!("the cards {cards} are not a bomb under this variant's rules"))?;
    Ok(crate::game::bombs::fact(seat, cards, h))
}

fn obj<'a>(v: &'a Value, what: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{what} must be a JSON object, not {v}"))
}

fn check_keys(
    o: &serde_json::Map<String, Value>,
    allowed: &[&str],
    what: &str,
) -> Result<(), String> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unexpected field {k:?} in {what} (fields: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

/// A bomb in JSON: the full `BombFact` shape, `{"seat": S, "cards": "…"}`, or (in
/// `bombs_in_hand`, where the seat is the index) just the cards string.
fn expand_bomb(
    v: &Value,
    default_seat: Option<usize>,
    rules: &Rules,
    what: &str,
) -> Result<Value, String> {
    let (seat, cards) = match v {
        Value::String(s) => (
            default_seat.ok_or_else(|| format!("{what}: a bare cards string needs a seat"))?,
            s.as_str(),
        ),
        Value::Object(o) if o.contains_key("kind") => return Ok(v.clone()),
        Value::Object(o) => {
            check_keys(o, &["seat", "cards"], what)?;
            let seat = match o.get("seat") {
                Some(s) => s
                    .as_u64()
                    .ok_or_else(|| format!("{what}.seat must be a seat number"))?
                    as usize,
                None => default_seat.ok_or_else(|| format!("{what}: missing seat"))?,
            };
            let cards = o
                .get("cards")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{what}: missing cards (e.g. \"7 7 7 7 7 BJ\")"))?;
            (seat, cards)
        }
        other => {
            return Err(format!(
                "{what} must be a bomb object or a cards string, not {other}"
            ));
        }
    };
    let seat = u8::try_from(seat)
        .map(Seat::new)
        .map_err(|_| format!("{what}: seat {seat} out of range"))?;
    let rc: RankCounts = cards.parse().map_err(|e| format!("{what}: {e}"))?;
    let b = bomb_fact(seat, rc, rules).map_err(|e| format!("{what}: {e}"))?;
    serde_json::to_value(b).map_err(|e| e.to_string())
}

fn expand_bomb_lists(
    o: &mut serde_json::Map<String, Value>,
    players: usize,
    rules: &Rules,
) -> Result<(), String> {
    let played = match o.get("bombs_played") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, b)| expand_bomb(b, None, rules, &format!("bombs_played[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("bombs_played must be an array, not {other}")),
    };
    o.insert("bombs_played".into(), Value::Array(played));
    let in_hand = match o.get("bombs_in_hand") {
        None => vec![Value::Array(Vec::new()); players],
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(s, list)| match list {
                Value::Array(l) => l
                    .iter()
                    .enumerate()
                    .map(|(j, b)| {
                        expand_bomb(b, Some(s), rules, &format!("bombs_in_hand[{s}][{j}]"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array),
                other => Err(format!("bombs_in_hand[{s}] must be an array, not {other}")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "bombs_in_hand must be an array (one list per seat), not {other}"
            ));
        }
    };
    o.insert("bombs_in_hand".into(), Value::Array(in_hand));
    Ok(())
}

fn players_of(o: &mut serde_json::Map<String, Value>, rules: &Rules) -> Result<usize, String> {
    let players = match o.get("players") {
        None => rules.players,
        Some(v) => v
            .as_u64()
            .and_then(|p| u8::try_from(p).ok())
            .ok_or_else(|| format!("players must be 2 or 4, not {v}"))?,
    };
    if players != rules.players {
        return Err(format!(
            "players = {players}, but this variant is for {} players",
            rules.players
        ));
    }
    o.insert("players".into(), json!(players));
    o.entry("deal_number").or_insert(json!(1));
    Ok(players as usize)
}

fn check_seat(s: Seat, players: usize, what: &str) -> Result<(), String> {
    if s.index() < players {
        Ok(())
    } else {
        Err(format!(
            "{what}: seat {s} is not a seat of a {players}-player table"
        ))
    }
}

fn check_bombs(bombs: &[BombFact], players: usize, what: &str) -> Result<(), String> {
    for (i, b) in bombs.iter().enumerate() {
        check_seat(b.seat, players, &format!("{what}[{i}]"))?;
    }
    Ok(())
}

/// The outcome of a 2-player deal from the loser's cards left (`Outcome::from_loser_cards`, the
/// deal engine's rule); `None` when the loser holds no cards, which no deal ends with.
fn outcome_from_cards(loser_cards: u8, rules: &Rules) -> Option<Outcome> {
    (loser_cards > 0).then(|| Outcome::from_loser_cards(loser_cards, rules))
}

/// Parses a deal's facts from JSON: the `DealFacts` serde shape, where `players` and
/// `deal_number` may be left out (the variant's player count, 1), `outcome` may be left out
/// (derived from the places, or for 2 players from the loser's cards left), `cards_left` may be
/// left out for 4 players (zeros), `bombs_played` / `bombs_in_hand` may be left out (none) and a
/// bomb may be written `{"seat": 0, "cards": "7 7 7 7 7 7"}` (classified under the variant's
/// rules). The result is checked for coherence (places a permutation of the seats, outcome
/// matching the places, seats in range).
pub fn parse_deal(value: &Value, rules: &Rules) -> Result<DealFacts, String> {
    let mut o = obj(value, "the deal facts")?.clone();
    check_keys(
        &o,
        &[
            "players",
            "deal_number",
            "outcome",
            "places",
            "cards_left",
            "bombs_played",
            "bombs_in_hand",
        ],
        "the deal facts",
    )?;
    let players = players_of(&mut o, rules)?;
    if !o.contains_key("cards_left") {
        if players == 2 {
            return Err(
                "cards_left is required for 2 players (the loser's cards decide the result)".into(),
            );
        }
        o.insert("cards_left".into(), json!(vec![0; players]));
    }
    expand_bomb_lists(&mut o, players, rules)?;
    let places: Vec<Seat> =
        serde_json::from_value(o.get("places").cloned().ok_or("missing places")?)
            .map_err(|e| format!("places: {e}"))?;
    let mut sorted = places.clone();
    sorted.sort_unstable();
    if sorted != Seat::all(players as u8).collect::<Vec<_>>() {
        return Err(format!(
            "places {places:?} must list every seat 0..{players} once"
        ));
    }
    let cards: Vec<u8> =
        serde_json::from_value(o["cards_left"].clone()).map_err(|e| format!("cards_left: {e}"))?;
    if cards.len() != players {
        return Err(format!(
            "cards_left has {} entries; expected {players}",
            cards.len()
        ));
    }
    let derived = if players == 4 {
        Outcome::from_places(&places)
    } else {
        outcome_from_cards(cards[places[1].index()], rules)
    };
    match (o.get("outcome"), derived) {
        (None, Some(d)) => {
            o.insert("outcome".into(), json!(d.name()));
        }
        (None, None) => return Err("cannot derive the outcome: the loser holds no cards".into()),
        (Some(_), _) => {}
    }
    let facts: DealFacts =
        serde_json::from_value(Value::Object(o)).map_err(|e| format!("deal facts: {e}"))?;
    if let Some(d) = derived
        && d != facts.outcome
    {
        return Err(format!(
            "outcome {:?} contradicts the places/cards left, which make it {:?}",
            facts.outcome.name(),
            d.name()
        ));
    }
    if facts.table.bombs_in_hand.len() != players {
        return Err(format!(
            "bombs_in_hand has {} lists; expected one per seat ({players})",
            facts.table.bombs_in_hand.len()
        ));
    }
    check_bombs(&facts.table.bombs_played, players, "bombs_played")?;
    for (s, list) in facts.table.bombs_in_hand.iter().enumerate() {
        check_bombs(list, players, &format!("bombs_in_hand[{s}]"))?;
    }
    Ok(facts)
}

/// Parses an escape's facts from JSON: the `EscapeFacts` serde shape with the same shorthands as
/// [`parse_deal`]; `reason` defaults to `left`, `places` (players already out) to none;
/// `cards_left` is required.
pub fn parse_escape(value: &Value, rules: &Rules) -> Result<EscapeFacts, String> {
    let mut o = obj(value, "the escape facts")?.clone();
    check_keys(
        &o,
        &[
            "players",
            "deal_number",
            "escaper",
            "reason",
            "places",
            "cards_left",
            "bombs_played",
            "bombs_in_hand",
        ],
        "the escape facts",
    )?;
    let players = players_of(&mut o, rules)?;
    o.entry("reason").or_insert(json!("left"));
    o.entry("places").or_insert(json!([]));
    if !o.contains_key("cards_left") {
        return Err(
            "cards_left is required (the escaper's cards decide the penalty in 二人)".into(),
        );
    }
    expand_bomb_lists(&mut o, players, rules)?;
    let facts: EscapeFacts =
        serde_json::from_value(Value::Object(o)).map_err(|e| format!("escape facts: {e}"))?;
    check_seat(facts.escaper, players, "escaper")?;
    if facts.table.cards_left.len() != players {
        return Err(format!(
            "cards_left has {} entries; expected {players}",
            facts.table.cards_left.len()
        ));
    }
    for s in &facts.table.places {
        check_seat(*s, players, "places")?;
    }
    check_bombs(&facts.table.bombs_played, players, "bombs_played")?;
    Ok(facts)
}

/// Parses seating facts from JSON: the `SeatingFacts` serde shape; `players`, `deal_number`
/// (1), `previous` (none) and `random` (0) may be left out.
pub fn parse_seating(value: &Value, rules: &Rules) -> Result<SeatingFacts, String> {
    let mut o = obj(value, "the seating facts")?.clone();
    check_keys(
        &o,
        &[
            "players",
            "deal_number",
            "shown_card",
            "shown_holders",
            "previous",
            "random",
        ],
        "the seating facts",
    )?;
    let players = players_of(&mut o, rules)?;
    o.entry("previous").or_insert(Value::Null);
    o.entry("random").or_insert(json!(0));
    let facts: SeatingFacts =
        serde_json::from_value(Value::Object(o)).map_err(|e| format!("seating facts: {e}"))?;
    for s in facts.shown_holders.iter().flatten() {
        check_seat(*s, players, "shown_holders")?;
    }
    if facts.shown_holders[0].is_none() {
        return Err("shown_holders[0] (the holder of the shown card) is required".into());
    }
    if let Some(p) = &facts.previous {
        for s in p.places.iter().chain(p.escaped.iter()) {
            check_seat(*s, players, "previous")?;
        }
    }
    Ok(facts)
}

/// Parses timeout facts from JSON (the `TimeoutFacts` serde shape).
pub fn parse_timeout(value: &Value, rules: &Rules) -> Result<TimeoutFacts, String> {
    let o = obj(value, "the timeout facts")?;
    check_keys(
        o,
        &["seat", "consecutive_timeouts", "disconnected"],
        "the timeout facts",
    )?;
    let facts: TimeoutFacts =
        serde_json::from_value(value.clone()).map_err(|e| format!("timeout facts: {e}"))?;
    check_seat(facts.seat, rules.players as usize, "seat")?;
    Ok(facts)
}
