//! Requests in: a SubmitPlay's action, a CreateGame's parameters, a GetHints page query, a
//! declared interpretation, and the wire enum of hand types (both directions).

use crate::cards::{CardSet, Rank};
use crate::hand::{Declared, HandType};
use crate::service::pb;
use crate::service::record::{CreateBase, NewGame};
use crate::service::status::{ApiError, Reason};

pub use crate::service::requested::Action;

/// Parses a SubmitPlay request's action.
pub fn action(req: &pb::SubmitPlayRequest) -> Result<Action, ApiError> {
    if req.pass {
        if !req.cards.is_empty() {
            return Err(ApiError::new(Reason::BadRequest, "a pass carries no cards"));
        }
        return Ok(Action::Pass);
    }
    if req.cards.is_empty() {
        return Err(ApiError::new(
            Reason::BadRequest,
            "no cards: send card ids, or pass = true to pass",
        ));
    }
    if req.cards.len() > 108 {
        return Err(ApiError::new(Reason::BadRequest, "too many cards"));
    }
    let cards = CardSet::from_ids(&req.cards)?;
    let declared = match &req.declared {
        None => None,
        Some(d) => declared(d)?,
    };
    Ok(Action::Play { cards, declared })
}

/// A declared interpretation; type 0 (unspecified) declares nothing.
pub fn declared(d: &pb::Declared) -> Result<Option<Declared>, ApiError> {
    if d.r#type == 0 {
        return Ok(None);
    }
    let kind = hand_type_from(d.r#type).ok_or_else(|| {
        ApiError::new(
            Reason::BadRequest,
            format!("unknown declared type {}", d.r#type),
        )
    })?;
    let key = if d.key.is_empty() {
        None
    } else {
        Some(
            d.key
                .parse::<Rank>()
                .map_err(|e| ApiError::new(Reason::BadRequest, format!("declared key: {e}")))?,
        )
    };
    Ok(Some(Declared { kind, key }))
}

/// The wire form of a declared interpretation.
pub fn declared_to(d: Declared) -> pb::Declared {
    pb::Declared {
        r#type: hand_type(d.kind) as i32,
        key: d.key.map(|k| k.symbol().to_string()).unwrap_or_default(),
    }
}

/// The wire enum of a hand type.
pub fn hand_type(t: HandType) -> pb::HandType {
    match t {
        HandType::Single => pb::HandType::TypeSingle,
        HandType::Pair => pb::HandType::TypePair,
        HandType::Triple => pb::HandType::TypeTriple,
        HandType::Straight => pb::HandType::TypeStraight,
        HandType::PairChain => pb::HandType::TypePairChain,
        HandType::TripleChain => pb::HandType::TypeTripleChain,
        HandType::Bomb => pb::HandType::TypeBomb,
        HandType::ThreeJokers => pb::HandType::TypeThreeJokers,
        HandType::FourJokers => pb::HandType::TypeFourJokers,
        HandType::ChainBomb => pb::HandType::TypeChainBomb,
    }
}

fn hand_type_from(v: i32) -> Option<HandType> {
    let t = pb::HandType::try_from(v).ok()?;
    HandType::ALL.into_iter().find(|h| hand_type(*h) == t)
}

/// A GetHints request's page query (`hints::Query`): the limit, the page token, the type
/// filter by stable type names.
pub fn hint_query(req: &pb::GetHintsRequest) -> Result<crate::hints::Query, ApiError> {
    if req.types.len() > HandType::ALL.len() {
        return Err(ApiError::new(Reason::BadRequest, "too many types"));
    }
    let types = req
        .types
        .iter()
        .map(|t| {
            t.parse::<HandType>().map_err(|_| {
                ApiError::new(
                    Reason::BadRequest,
                    format!(
                        "unknown type {} (known: {})",
                        crate::service::status::clip(t),
                        HandType::ALL.map(|h| h.name()).join(", ")
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::hints::Query {
        limit: req.limit as usize,
        start: match req.page_token.is_empty() {
            true => crate::hints::Start::Offset(0),
            false => crate::hints::Start::Token(req.page_token.clone()),
        },
        types,
    })
}

/// A CreateGame request's parameters (checked against the variant by `Record::new`).
pub fn new_game(req: pb::CreateGameRequest) -> NewGame {
    NewGame {
        base: CreateBase {
            variant: req.variant,
            players: req.players,
            options: req.options.into_iter().collect(),
            seed: req.seed,
            request_id: req.request_id,
        },
        deals: req.deals,
        preset_hands: req
            .preset_hands
            .map(|p| p.hands.into_iter().map(|h| h.cards).collect()),
        bots: req.bots.into_iter().collect(),
        bot_delay_ms: req.bot_delay_ms,
        auto_policy: req.auto_policy,
    }
}
