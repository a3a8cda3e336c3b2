//! Conversions between wire (`pb`) values and domain values, in one place. Malformed input is
//! rejected here (`INVALID_ARGUMENT`) and goes no further.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::pb;
use super::status::{ApiError, Reason};
use crate::cards::{CardError, CardSet, Rank};
use crate::hand::{Declared, Hand, HandType};
use crate::variants::{CompiledVariant, OptionKind, ReloadReport};

/// A player's requested action, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Play {
        cards: CardSet,
        declared: Option<Declared>,
    },
    Pass,
}

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
    let cards = CardSet::from_ids(&req.cards).map_err(card_error)?;
    let declared = match &req.declared {
        None => None,
        Some(d) if d.r#type == 0 => None,
        Some(d) => Some(declared(d)?),
    };
    Ok(Action::Play { cards, declared })
}

/// Maps a card error to its reason.
pub fn card_error(e: CardError) -> ApiError {
    match e {
        CardError::DuplicateCard(_) => ApiError::new(Reason::DuplicateCard, e.to_string()),
        _ => ApiError::new(Reason::BadCardId, e.to_string()),
    }
}

fn declared(d: &pb::Declared) -> Result<Declared, ApiError> {
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
    Ok(Declared { kind, key })
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

/// A classified play with its physical cards. Wild jokers are matched to the ranks they became
/// in order (small jokers first, then big).
pub fn play(cards: CardSet, hand: &Hand) -> pb::Play {
    let mut jokers: Vec<(Rank, u32)> = cards
        .iter()
        .filter(|c| c.rank().is_joker())
        .map(|c| (c.rank(), c.id()))
        .collect();
    let mut wilds = Vec::new();
    for (from, to) in hand.wilds.iter() {
        if let Some(i) = jokers.iter().position(|(r, _)| *r == from) {
            let (_, id) = jokers.remove(i);
            wilds.push(pb::WildUse {
                card: id,
                as_rank: to.symbol().to_string(),
            });
        }
    }
    pb::Play {
        cards: cards.ids(),
        r#type: hand_type(hand.kind) as i32,
        type_name: hand.kind.name().to_string(),
        length: u32::from(hand.len),
        key: hand
            .key()
            .map(|k| k.symbol().to_string())
            .unwrap_or_default(),
        stars: hand.stars.map(u32::from),
        wilds,
        notation: cards.rank_counts().to_string(),
        as_notation: hand.substituted.to_string(),
        group: u32::from(hand.group),
        links: u32::from(hand.links),
        cyclic: hand.cyclic,
    }
}

/// A loaded variant, for ListVariants.
pub fn variant(v: &std::sync::Arc<CompiledVariant>) -> pb::Variant {
    let options = v
        .options()
        .iter()
        .map(|o| {
            let (ty, min, max) = match &o.kind {
                OptionKind::Int { min, max, .. } => ("int", min.to_string(), max.to_string()),
                OptionKind::Float { min, max, .. } => ("float", min.to_string(), max.to_string()),
                OptionKind::Bool { .. } => ("bool", String::new(), String::new()),
                OptionKind::Choice { .. } => ("string", String::new(), String::new()),
                OptionKind::IntList { min, max, .. } => ("list", min.to_string(), max.to_string()),
            };
            pb::VariantOption {
                name: o.name.clone(),
                r#type: ty.to_string(),
                default_value: o.default_value().to_string(),
                min,
                max,
                description: format!("{} ({})", o.doc, o.range_text()),
            }
        })
        .collect::<Vec<_>>();
    let default_deals = v
        .options()
        .iter()
        .find(|o| o.name == "deals_per_match")
        .and_then(|o| match o.default_value() {
            crate::variants::OptionValue::Int(n) => u32::try_from(n).ok(),
            _ => None,
        })
        .unwrap_or(1);
    pb::Variant {
        id: v.id().to_string(),
        name: v.meta().name.clone(),
        version: v.hash().to_string(),
        players: u32::from(v.meta().players),
        description: v.meta().description.clone(),
        options,
        default_deals,
    }
}

/// A reload report, for ReloadVariants.
pub fn reload_report(r: &ReloadReport) -> pb::ReloadVariantsResponse {
    let mut outcomes = Vec::new();
    for (id, hash) in &r.activated {
        outcomes.push(pb::ReloadOutcome {
            file: format!("{id}.rhai"),
            id: id.clone(),
            version: hash.clone(),
            result: "activated".into(),
            error: String::new(),
        });
    }
    for id in &r.unchanged {
        outcomes.push(pb::ReloadOutcome {
            file: format!("{id}.rhai"),
            id: id.clone(),
            version: String::new(),
            result: "unchanged".into(),
            error: String::new(),
        });
    }
    for e in &r.rejected {
        outcomes.push(pb::ReloadOutcome {
            file: e.origin().to_string(),
            id: String::new(),
            version: String::new(),
            result: "rejected".into(),
            error: e.to_string(),
        });
    }
    for id in &r.removed {
        outcomes.push(pb::ReloadOutcome {
            file: format!("{id}.rhai"),
            id: id.clone(),
            version: String::new(),
            result: "removed".into(),
            error: String::new(),
        });
    }
    pb::ReloadVariantsResponse { outcomes }
}

/// The id of an idempotent create: derived from the platform and request id with the token key,
/// so every replica sharing the key derives the same id.
pub fn derived_id(key: &[u8; 32], platform: Option<&str>, request_id: &str) -> String {
    match <Hmac<Sha256> as Mac>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(b"create|");
            mac.update(platform.unwrap_or("").as_bytes());
            mac.update(b"|");
            mac.update(request_id.as_bytes());
            hex::encode(&mac.finalize().into_bytes()[..12])
        }
        Err(_) => hex::encode(
            &sha2::Digest::finalize(<Sha256 as sha2::Digest>::new_with_prefix(request_id))[..12],
        ),
    }
}

/// Points from hundredths.
pub fn points(centi: i64) -> f64 {
    centi as f64 / 100.0
}
