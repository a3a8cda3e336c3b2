//! The client side of `shengji.v1` for Rust clients of the engine (the load generator, the tests):
//! a seat's `GameState` read back into the core's [`View`] (so the core's bot decides from what the
//! server showed that seat), a core [`Action`] as the request's action, and a `GetReplayResponse`
//! re-executed by the core with the pinned script, checking every state hash.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cards::{Card, CardSet, Suit};
use crate::seat::Seat;
use crate::service::pb::shengji as pb;
use crate::shengji::{Action, Game, Level, Phase, Setup, View};
use crate::variants::ShengjiVariant;

fn card(id: u32) -> Result<Card, String> {
    Card::new(id).map_err(|e| e.to_string())
}

fn set(ids: &[u32]) -> Result<CardSet, String> {
    CardSet::from_ids(ids).map_err(|e| e.to_string())
}

fn seat(id: u32) -> Result<Seat, String> {
    Seat::checked(id, 4).ok_or_else(|| format!("seat {id} out of range"))
}

fn level(face: u32) -> Result<Level, String> {
    u8::try_from(face)
        .ok()
        .and_then(Level::new)
        .ok_or_else(|| format!("level {face} out of range"))
}

fn suit(s: i32) -> Option<Suit> {
    match pb::Suit::try_from(s).ok()? {
        pb::Suit::Spades => Some(Suit::Spades),
        pb::Suit::Hearts => Some(Suit::Hearts),
        pb::Suit::Clubs => Some(Suit::Clubs),
        pb::Suit::Diamonds => Some(Suit::Diamonds),
        pb::Suit::Unspecified => None,
    }
}

fn seat_cards(list: &[pb::SeatCard]) -> Result<Vec<(Seat, Card)>, String> {
    list.iter()
        .map(|c| Ok((seat(c.seat)?, card(c.card)?)))
        .collect()
}

/// A seat's (or a spectator's) state as the core's view. The deal results are left out (a bot
/// decides within the deal); everything a bot reads is there.
pub fn view(s: &pb::GameState) -> Result<View, String> {
    let phase = match pb::Phase::try_from(s.phase).map_err(|e| e.to_string())? {
        pb::Phase::Dealing => Phase::Dealing,
        pb::Phase::Exchange => Phase::Exchange,
        pb::Phase::Playing => Phase::Playing,
        pb::Phase::Finished => Phase::Finished,
        pb::Phase::Unspecified => return Err("no phase".into()),
    };
    let levels = s.levels.as_ref().ok_or("no levels")?;
    let mut hand_counts = [0u8; 4];
    for (n, &c) in hand_counts.iter_mut().zip(&s.hand_counts) {
        *n = u8::try_from(c).map_err(|e| e.to_string())?;
    }
    let two = |v: &[u32]| {
        [
            v.first().copied().unwrap_or(0),
            v.get(1).copied().unwrap_or(0),
        ]
    };
    Ok(View {
        seq: s.seq,
        phase,
        deal_number: s.deal_number,
        levels: [level(levels.team0)?, level(levels.team1)?],
        level: level(s.level)?,
        dealer: s.dealer.map(seat).transpose()?,
        first_seat: seat(s.first_seat)?,
        trump: suit(s.trump),
        declaration: s
            .declaration
            .as_ref()
            .map(|d| Ok::<_, String>((seat(d.seat)?, card(d.card)?)))
            .transpose()?,
        your_seat: s.your_seat.map(seat).transpose()?,
        hand: set(&s.hand)?,
        hand_counts,
        stock_count: u8::try_from(s.stock_count).map_err(|e| e.to_string())?,
        bottom: (!s.bottom.is_empty()).then(|| set(&s.bottom)).transpose()?,
        turned: s
            .turned
            .iter()
            .map(|&c| card(c))
            .collect::<Result<_, _>>()?,
        turn: s.turn.map(seat).transpose()?,
        trick: seat_cards(&s.trick)?,
        last_trick: seat_cards(&s.last_trick)?,
        tricks_played: u8::try_from(s.tricks_played).map_err(|e| e.to_string())?,
        won: [set(&s.won0)?, set(&s.won1)?],
        points: two(&s.points),
        legal: set(&s.legal)?,
        results: Vec::new(),
        winner: s.winner.map(|w| w as u8),
        all_hands: None,
    })
}

/// A core action as the request's action, with the seat that sends it (`None` for a deal step,
/// which any seat may send).
pub fn request(action: &Action) -> (Option<u8>, pb::submit_action_request::Action) {
    use pb::submit_action_request::Action as A;
    match action {
        Action::Deal => (None, A::Deal(pb::Deal { count: 1 })),
        Action::Declare { seat, card } => (
            Some(seat.number()),
            A::Declare(pb::Declare { card: card.id() }),
        ),
        Action::Bury { seat, cards } => (
            Some(seat.number()),
            A::Bury(pb::Bury {
                cards: cards.iter().map(Card::id).collect(),
            }),
        ),
        Action::Play { seat, card } => (
            Some(seat.number()),
            A::Play(pb::PlayCard { card: card.id() }),
        ),
    }
}

/// Re-executes a replay with the core and its pinned script, checking the state hash after every
/// step; the match as replayed.
pub fn verify_replay(r: &pb::GetReplayResponse) -> Result<Game, String> {
    let compiled = Arc::new(
        ShengjiVariant::compile("replay", &r.script, Some(&r.variant))
            .map_err(|e| e.to_string())?,
    );
    let options: BTreeMap<String, String> = r.options.clone().into_iter().collect();
    let hooks = compiled.configure(&options).map_err(|e| e.to_string())?;
    let seed: [u8; 32] = hex::decode(&r.seed)
        .map_err(|e| e.to_string())?
        .try_into()
        .map_err(|_| "the seed is not 32 bytes".to_string())?;
    let deck = (!r.deck.is_empty())
        .then(|| {
            r.deck
                .iter()
                .map(|&i| card(i))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let setup = Setup {
        seed,
        deck,
        start: None,
    };
    use pb::replay_step::Action as R;
    let mut actions = Vec::new();
    let mut hashes = Vec::new();
    for s in &r.steps {
        let seat = seat(s.player)?;
        let a = match s.action.as_ref().ok_or("a step without an action")? {
            R::Deal(_) => Action::Deal,
            R::Declare(d) => Action::Declare {
                seat,
                card: card(d.card)?,
            },
            R::Bury(b) => Action::Bury {
                seat,
                cards: set(&b.cards)?,
            },
            R::Play(p) => Action::Play {
                seat,
                card: card(p.card)?,
            },
            // No core action: a leave, or presence.
            R::Leave(_) | R::Disconnect(_) | R::Reconnect(_) | R::Expire(_) => continue,
        };
        actions.push(a);
        hashes.push(s.state_hash.clone());
    }
    Game::replay(setup, &hooks, &actions, Some(&hashes)).map_err(|e| e.to_string())
}
