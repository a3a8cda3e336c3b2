//! A 升級 game's stored creation record: Shuangkou's [`Record`] (variant and pinned version with
//! the script text, seed, options, players, token digests — never the tokens) plus what only 升級
//! has (the preset first deck), tagged with its game family.
//!
//! Tokens, their derivation and verification, the seed and its commitment are the record's own
//! (`service::record`), shared by both games.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cards::{Card, CardSet};
use crate::service::record::{
    CreateBase, Minting, Record, Tokens, player_names, seed_hex, tokens_for,
};
use crate::service::status::{ApiError, Reason};
use crate::shengji::Setup;
use crate::variants::ShengjiVariant;

/// The game family tag of a 升級 record.
pub const GAME: &str = "shengji";

/// The stored creation record of a 升級 game (JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShengjiRecord {
    /// Always [`GAME`].
    pub game: String,
    #[serde(flatten)]
    pub base: Record,
    /// The first deal's deck in dealing order (admin, tests); `None`: shuffled from the seed.
    pub deck: Option<Vec<u32>>,
    /// Seats played by the server's rule bot.
    #[serde(default)]
    pub bot_seats: Vec<u8>,
}

/// What a client asks for when it creates a 升級 game (a `CreateGameRequest` as `wire` reads it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewShengji {
    /// Variant, players, options, seed and idempotency key, as Shuangkou's.
    pub base: CreateBase,
    /// The first deal's deck in dealing order (admin only).
    pub deck: Option<Vec<u32>>,
    /// Seats played by the server's rule bot.
    pub bot_seats: Vec<u32>,
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Reason::BadRequest, msg)
}

impl ShengjiRecord {
    /// Validates a create request against the variant and builds the record and the tokens.
    pub fn new(
        compiled: &Arc<ShengjiVariant>,
        req: &NewShengji,
        minting: Minting<'_>,
    ) -> Result<(ShengjiRecord, Tokens), ApiError> {
        let players = player_names(&req.base.players, 4, "升級")?;
        compiled
            .configure(&req.base.options)
            .map_err(|e| ApiError::new(Reason::BadOption, e.to_string()))?;
        if let Some(deck) = &req.deck {
            deck_of(deck)?;
        }
        let mut bot_seats = Vec::new();
        for &s in &req.bot_seats {
            match u8::try_from(s) {
                Ok(seat) if seat < 4 && !bot_seats.contains(&seat) => bot_seats.push(seat),
                _ => return Err(bad(format!("bot seat {s} is not a distinct seat 0..4"))),
            }
        }
        if bot_seats.len() > 3 {
            return Err(bad("at most 3 bot seats (a player deals)"));
        }
        bot_seats.sort_unstable();
        let (tokens, seat_digests, spectator_digest) =
            tokens_for(minting.token_key, minting.game_id, 4, &BTreeMap::new())?;
        let base = Record {
            id: minting.game_id.to_string(),
            platform: minting.platform,
            variant: crate::variants::Family::id(compiled.as_ref()).to_string(),
            version: crate::variants::Family::hash(compiled.as_ref()).to_string(),
            script: crate::variants::Family::source(compiled.as_ref()).to_string(),
            options: req.base.options.clone(),
            deals: 0,
            players,
            seed: seed_hex(&req.base.seed)?,
            preset_hands: None,
            created_at: minting.now_ms,
            seat_digests,
            spectator_digest,
            hash_scheme: crate::game::HashScheme::Compact,
            request_digest: None,
            bots: BTreeMap::new(),
            bot_delay_ms: 0,
            auto_policy: String::new(),
        };
        let record = ShengjiRecord {
            game: GAME.to_string(),
            base,
            deck: req.deck.clone(),
            bot_seats,
        };
        Ok((record, tokens))
    }

    /// True when the server's bot plays `seat`.
    pub fn is_bot(&self, seat: u8) -> bool {
        self.bot_seats.contains(&seat)
    }

    /// The bot of `seat`, seeded from the game's seed.
    pub fn bot(&self, seat: u8) -> Result<crate::shengji::bot::RuleBot, ApiError> {
        let seed = self.base.seed_bytes()?;
        let mut head = [0u8; 8];
        head.copy_from_slice(&seed[..8]);
        Ok(crate::shengji::bot::RuleBot::new(
            u64::from_le_bytes(head) ^ u64::from(seat),
        ))
    }

    /// The core's setup of the match.
    pub fn setup(&self) -> Result<Setup, ApiError> {
        Ok(Setup {
            seed: self.base.seed_bytes()?,
            deck: self.deck.as_deref().map(deck_of).transpose()?,
            start: None,
        })
    }

    pub fn encode(&self) -> Result<Vec<u8>, ApiError> {
        serde_json::to_vec(self).map_err(|e| ApiError::new(Reason::StoreFailed, e.to_string()))
    }

    pub fn decode(bytes: &[u8]) -> Result<ShengjiRecord, ApiError> {
        let mut r: ShengjiRecord = serde_json::from_slice(bytes).map_err(|e| {
            ApiError::new(
                Reason::StoreFailed,
                format!("stored record unreadable: {e}"),
            )
        })?;
        r.base.complete()?;
        if r.game != GAME {
            return Err(ApiError::new(
                Reason::StoreFailed,
                format!("the stored game is a {} game, not 升級", r.game),
            ));
        }
        Ok(r)
    }
}

/// A preset deck: 54 distinct card ids 0..=53.
fn deck_of(ids: &[u32]) -> Result<Vec<Card>, ApiError> {
    if ids.len() != 54 {
        return Err(bad(format!("a deck has 54 cards, not {}", ids.len())));
    }
    let cards: Vec<Card> = ids
        .iter()
        .map(|&id| match id {
            0..=53 => Card::new(id).map_err(ApiError::from),
            _ => Err(ApiError::new(
                Reason::BadCardId,
                format!("card {id} is not in the one-deck game (ids 0..=53)"),
            )),
        })
        .collect::<Result<_, _>>()?;
    let set: CardSet = cards.iter().copied().collect();
    if set.len() != 54 {
        return Err(ApiError::new(
            Reason::DuplicateCard,
            "a card appears twice in the deck",
        ));
    }
    Ok(cards)
}

#[cfg(test)]
mod tests {
    use super::{GAME, ShengjiRecord};
    use crate::service::record::tests::{fields, in_progress, same};

    #[test]
    fn a_shengji_record_embedding_one_reads_its_default_names_back() {
        let r = ShengjiRecord {
            game: GAME.into(),
            base: in_progress(),
            deck: None,
            bot_seats: vec![2],
        };
        let body = r.encode().unwrap();
        assert!(!fields(&body).iter().any(|k| k == "players"));
        let back = ShengjiRecord::decode(&body).unwrap();
        same(&back.base, &r.base);
        assert_eq!(back.bot_seats, [2]);
    }
}
