//! Facts in and out of scripts: the hook inputs of `game::hooks` as Rhai maps, the JSON form
//! operators write (with shorthands), and seeded random facts for a variant's self-check.
//!
//! The maps mirror the serde shapes of the structs field for field (`Option::None` is `()`;
//! enums are their snake_case names; rank multisets are notation strings such as
//! `"7 7 7 7 BJ"`; the shown card is `#{ id, rank, suit }`), except bombs: a bomb is the script
//! type `Bomb` (the `BombFact` itself, with the same properties, read-only; see
//! `engine::register_bomb`). The seating `random` is the facts'
//! `u64` with its top bit cleared, so that it is a non-negative Rhai integer (values below 2^63
//! pass unchanged).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rhai::{Array, Dynamic, Map};
use serde_json::{Value, json};

use crate::cards::{Card, Rank, RankCounts, Suit};
use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, EscapeReason, Outcome, PreviousDeal, SeatIndex, SeatingFacts,
    TimeoutFacts,
};
use crate::hand;
use crate::rules::{ChainBombs, Rules, WildJokers};

fn int(i: impl Into<i64>) -> Dynamic {
    Dynamic::from_int(i.into())
}

fn seats(v: &[SeatIndex]) -> Dynamic {
    Dynamic::from_array(v.iter().map(|s| int(*s)).collect())
}

fn opt_seat(s: Option<SeatIndex>) -> Dynamic {
    s.map_or(Dynamic::UNIT, int)
}

/// The snake_case name of an outcome (`Outcome::name`).
pub fn outcome_name(o: Outcome) -> &'static str {
    o.name()
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

/// `DealFacts` as the `facts` map of `settle`.
pub fn deal_map(f: &DealFacts) -> Dynamic {
    let mut m = Map::new();
    m.insert("players".into(), int(f.players));
    m.insert("deal_number".into(), int(f.deal_number));
    m.insert("outcome".into(), Dynamic::from(outcome_name(f.outcome)));
    m.insert("places".into(), seats(&f.places));
    m.insert("cards_left".into(), cards_left(&f.cards_left));
    m.insert("bombs_played".into(), bombs(&f.bombs_played));
    m.insert("bombs_in_hand".into(), bombs_by_seat(&f.bombs_in_hand));
    Dynamic::from_map(m)
}

/// `EscapeFacts` as the `facts` map of `settle_escape`.
pub fn escape_map(f: &EscapeFacts) -> Dynamic {
    let mut m = Map::new();
    m.insert("players".into(), int(f.players));
    m.insert("deal_number".into(), int(f.deal_number));
    m.insert("escaper".into(), int(f.escaper));
    m.insert("reason".into(), Dynamic::from(f.reason.name()));
    m.insert("places".into(), seats(&f.places));
    m.insert("cards_left".into(), cards_left(&f.cards_left));
    m.insert("bombs_played".into(), bombs(&f.bombs_played));
    m.insert("bombs_in_hand".into(), bombs_by_seat(&f.bombs_in_hand));
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
                p.outcome
                    .map_or(Dynamic::UNIT, |o| Dynamic::from(outcome_name(o))),
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

// ---------------------------------------------------------------------------------------------
// JSON input (operators' form, with shorthands)
// ---------------------------------------------------------------------------------------------

/// A bomb from its cards: classified under `rules`; the strongest bomb interpretation is taken.
pub fn bomb_fact(seat: SeatIndex, cards: RankCounts, rules: &Rules) -> Result<BombFact, String> {
    let interpretations = hand::classify(cards, rules);
    let h = interpretations
        .iter()
        .find(|h| h.is_bomb())
        .ok_or_else(|| format!("the cards {cards} are not a bomb under this variant's rules"))?;
    Ok(BombFact {
        seat,
        kind: h.kind,
        cards,
        len: h.len,
        stars: h.stars,
        group: h.group,
        links: h.links,
    })
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
    let seat =
        SeatIndex::try_from(seat).map_err(|_| format!("{what}: seat {seat} out of range"))?;
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

fn check_seat(s: SeatIndex, players: usize, what: &str) -> Result<(), String> {
    if (s as usize) < players {
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
    let places: Vec<SeatIndex> =
        serde_json::from_value(o.get("places").cloned().ok_or("missing places")?)
            .map_err(|e| format!("places: {e}"))?;
    let mut sorted = places.clone();
    sorted.sort_unstable();
    if sorted != (0..players as SeatIndex).collect::<Vec<_>>() {
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
        outcome_from_cards(cards[places[1] as usize], rules)
    };
    match (o.get("outcome"), derived) {
        (None, Some(d)) => {
            o.insert("outcome".into(), json!(outcome_name(d)));
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
            outcome_name(facts.outcome),
            outcome_name(d)
        ));
    }
    if facts.bombs_in_hand.len() != players {
        return Err(format!(
            "bombs_in_hand has {} lists; expected one per seat ({players})",
            facts.bombs_in_hand.len()
        ));
    }
    check_bombs(&facts.bombs_played, players, "bombs_played")?;
    for (s, list) in facts.bombs_in_hand.iter().enumerate() {
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
    if facts.cards_left.len() != players {
        return Err(format!(
            "cards_left has {} entries; expected {players}",
            facts.cards_left.len()
        ));
    }
    for s in &facts.places {
        check_seat(*s, players, "places")?;
    }
    check_bombs(&facts.bombs_played, players, "bombs_played")?;
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

// ---------------------------------------------------------------------------------------------
// Seeded random facts (self-checks)
// ---------------------------------------------------------------------------------------------

/// A generator of random, coherent facts for one variant's rules.
pub struct RandomFacts {
    rng: ChaCha8Rng,
    rules: Rules,
}

impl RandomFacts {
    pub fn new(seed: u64, rules: Rules) -> RandomFacts {
        RandomFacts {
            rng: ChaCha8Rng::seed_from_u64(seed),
            rules,
        }
    }

    fn candidate(&mut self) -> RankCounts {
        let r = &self.rules;
        let rng = &mut self.rng;
        let wild_avail = match r.wild_jokers {
            WildJokers::None => 0u8,
            WildJokers::Big => 2,
            WildJokers::All => 4,
        };
        let pick = rng.random_range(0..100u32);
        let mut rc = RankCounts::EMPTY;
        let add_wilds = |rc: &mut RankCounts, n: u8| {
            for i in 0..n {
                // Big jokers first, then small ones where they are wild.
                let rank = if i < 2 {
                    Rank::BIG_JOKER
                } else {
                    Rank::SMALL_JOKER
                };
                rc.add(rank, 1);
            }
        };
        if pick < 8 {
            return "SJ SJ BJ BJ".parse().unwrap_or(RankCounts::EMPTY);
        }
        if pick < 16 && r.three_jokers {
            let text = if rng.random_bool(0.5) {
                "SJ SJ BJ"
            } else {
                "SJ BJ BJ"
            };
            return text.parse().unwrap_or(RankCounts::EMPTY);
        }
        if pick < 36 && r.chain_bombs != ChainBombs::None {
            let links = rng.random_range(3..=r.max_chain_links.clamp(3, 6));
            let start = rng.random_range(0..=(12 - links));
            let equal = rng.random_range(4..=8u8);
            let mut total = 0u32;
            for i in 0..links {
                let x = if r.chain_bombs == ChainBombs::Unequal {
                    rng.random_range(4..=8u8)
                } else {
                    equal
                };
                total += x as u32;
                if let Some(rank) = Rank::from_index(start + i) {
                    rc.add(rank, x);
                }
            }
            if total > r.hand_size as u32 {
                rc = RankCounts::EMPTY;
            }
            return rc;
        }
        let rank = Rank::from_index(rng.random_range(0..=12u8)).unwrap_or(Rank::THREE);
        let natural = rng.random_range(4..=8u8);
        let wilds = if wild_avail > 0 && rng.random_bool(0.3) {
            rng.random_range(1..=wild_avail)
        } else {
            0
        };
        rc.add(rank, natural);
        add_wilds(&mut rc, wilds);
        rc
    }

    /// A random bomb of `seat` with at most `max_cards` cards.
    pub fn bomb(&mut self, seat: SeatIndex, max_cards: u8) -> Option<BombFact> {
        for _ in 0..64 {
            let cards = self.candidate();
            if cards.is_empty() || cards.total() > max_cards as u32 {
                continue;
            }
            if let Ok(b) = bomb_fact(seat, cards, &self.rules) {
                return Some(b);
            }
        }
        None
    }

    fn bombs_played(&mut self, players: u8) -> Vec<BombFact> {
        let n = self.rng.random_range(0..=6);
        (0..n)
            .filter_map(|_| {
                let seat = self.rng.random_range(0..players);
                self.bomb(seat, self.rules.hand_size)
            })
            .collect()
    }

    fn bombs_in_hand(&mut self, cards_left: &[u8]) -> Vec<Vec<BombFact>> {
        cards_left
            .iter()
            .enumerate()
            .map(|(seat, &left)| {
                let mut out = Vec::new();
                let mut room = left;
                for _ in 0..self.rng.random_range(0..=2) {
                    if room < 3 {
                        break;
                    }
                    if let Some(b) = self.bomb(seat as SeatIndex, room) {
                        room -= b.len.min(room);
                        out.push(b);
                    }
                }
                out
            })
            .collect()
    }

    /// Random facts of a deal that ended normally.
    pub fn deal(&mut self) -> DealFacts {
        let players = self.rules.players;
        let hand = self.rules.hand_size.max(1);
        let (outcome, places, cards_left) = if players == 2 {
            let winner = self.rng.random_range(0..2u8);
            let loser = 1 - winner;
            let mut left = vec![0u8; 2];
            left[loser as usize] = self.rng.random_range(1..=hand);
            let outcome = Outcome::from_loser_cards(left[loser as usize], &self.rules);
            (outcome, vec![winner, loser], left)
        } else {
            let first = self.rng.random_range(0..4u8);
            let partner = (first + 2) % 4;
            let (a, b) = ((first + 1) % 4, (first + 3) % 4);
            let (a, b) = if self.rng.random_bool(0.5) {
                (a, b)
            } else {
                (b, a)
            };
            let outcome = match self.rng.random_range(0..3) {
                0 => Outcome::Double,
                1 => Outcome::Single,
                _ => Outcome::Draw,
            };
            let mut places = match outcome {
                Outcome::Double => vec![first, partner, a, b],
                Outcome::Single => vec![first, a, partner, b],
                Outcome::Draw => vec![first, a, b, partner],
            };
            let out = if outcome == Outcome::Double { 2 } else { 3 };
            let mut left = vec![0u8; 4];
            for &s in &places[out..] {
                left[s as usize] = self.rng.random_range(1..=hand);
            }
            places[out..].sort_by_key(|s| (left[*s as usize], *s));
            (outcome, places, left)
        };
        DealFacts {
            players,
            deal_number: self.rng.random_range(1..=8),
            outcome,
            bombs_played: self.bombs_played(players),
            bombs_in_hand: self.bombs_in_hand(&cards_left),
            places,
            cards_left,
        }
    }

    /// Random facts of an escape.
    pub fn escape(&mut self) -> EscapeFacts {
        let players = self.rules.players;
        let hand = self.rules.hand_size.max(1);
        let escaper = self.rng.random_range(0..players);
        let mut places = Vec::new();
        if players == 4 && self.rng.random_bool(0.5) {
            places.push((escaper + self.rng.random_range(1..4u8)) % 4);
        }
        let cards_left: Vec<u8> = (0..players)
            .map(|s| {
                if places.contains(&s) {
                    0
                } else {
                    self.rng.random_range(1..=hand)
                }
            })
            .collect();
        let reason = match self.rng.random_range(0..3) {
            0 => EscapeReason::Left,
            1 => EscapeReason::Disconnected,
            _ => EscapeReason::Timeouts,
        };
        EscapeFacts {
            players,
            deal_number: self.rng.random_range(1..=8),
            escaper,
            reason,
            places,
            bombs_played: self.bombs_played(players),
            bombs_in_hand: self.bombs_in_hand(&cards_left),
            cards_left,
        }
    }

    /// Random seating facts.
    pub fn seating(&mut self) -> SeatingFacts {
        let players = self.rules.players;
        let shown = Card::new(self.rng.random_range(0..108u32)).unwrap_or(Card::from_parts(
            0,
            Suit::Spades,
            Rank::THREE,
        ));
        let holder = self.rng.random_range(0..players);
        let twin = if players == 2 && self.rng.random_bool(0.5) {
            None
        } else {
            Some(self.rng.random_range(0..players))
        };
        let deal_number = self.rng.random_range(1..=8u32);
        let previous = (deal_number > 1).then(|| {
            let escaped = self
                .rng
                .random_bool(0.2)
                .then(|| self.rng.random_range(0..players));
            let mut places: Vec<SeatIndex> = (0..players).collect();
            let rot = self.rng.random_range(0..players);
            places.rotate_left(rot as usize);
            if players == 4 && self.rng.random_bool(0.5) {
                places.swap(1, 2);
            }
            let outcome = if escaped.is_some() {
                None
            } else if players == 4 {
                Outcome::from_places(&places)
            } else {
                Some(match self.rng.random_range(0..3) {
                    0 => Outcome::Double,
                    1 => Outcome::Single,
                    _ => Outcome::Draw,
                })
            };
            PreviousDeal {
                outcome,
                places,
                escaped,
            }
        });
        SeatingFacts {
            players,
            deal_number,
            shown_card: shown,
            shown_holders: [Some(holder), twin],
            previous,
            random: self.rng.random(),
        }
    }

    /// Random timeout facts.
    pub fn timeout(&mut self) -> TimeoutFacts {
        TimeoutFacts {
            seat: self.rng.random_range(0..self.rules.players),
            consecutive_timeouts: self.rng.random_range(1..=6),
            disconnected: self.rng.random_bool(0.3),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_deal_facts_expand() {
        let rules = crate::variants::builtin_rules("baibian").unwrap();
        let v =
            json!({"places": [0, 2, 1, 3], "bombs_played": [{"seat": 0, "cards": "7 7 7 7 7 BJ"}]});
        let f = parse_deal(&v, &rules).unwrap();
        assert_eq!(f.outcome, Outcome::Double);
        assert_eq!(f.bombs_played[0].stars, Some(6));
        assert_eq!(f.bombs_in_hand.len(), 4);
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
