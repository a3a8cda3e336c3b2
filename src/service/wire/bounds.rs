//! The size bounds of every string and list field of every request of both game services and the
//! variant admin service, checked once for every rpc before its handler runs
//! (`rpc::unary_in`), so no handler sees, stores or quotes back an unbounded value.
//!
//! Each limit is the one the field's proto comment documents; a field over its limit is refused
//! with a typed reason (NO_SUCH_GAME for a game id no game can have, UNKNOWN_VARIANT for a
//! variant name no variant can have, BAD_OPTION for an option, BAD_REQUEST otherwise), ErrorInfo
//! metadata `field` and `limit`, and a message that quotes none of the value. The handlers keep
//! their own, finer checks (a seed is 64 hex digits, a bot name a known bot…); these bounds are
//! the outer ones, never stricter than what a handler accepts.

use crate::service::pb;
use crate::service::pb::shengji as sj;
use crate::service::status::{ApiError, Reason};

/// A game id (both games' ids are 24 hex digits; a token names its game).
pub const GAME_ID_BYTES: usize = 128;
/// A variant name.
pub const VARIANT_BYTES: usize = 64;
/// Options of one CreateGame, and the length of each name and value.
pub const OPTIONS: usize = 64;
pub const OPTION_NAME_BYTES: usize = 64;
pub const OPTION_VALUE_BYTES: usize = 1024;
/// Names in `players` (no variant seats more than 4), and each name's length.
pub const PLAYERS: usize = 8;
pub const PLAYER_NAME_BYTES: usize = 128;
/// An idempotency key (`record::MAX_REQUEST_ID_BYTES`).
pub const REQUEST_ID_BYTES: usize = crate::service::record::MAX_REQUEST_ID_BYTES;
/// A seed: 64 hex digits.
pub const SEED_BYTES: usize = 64;
/// Card ids in one list (a play, a hand, a deck, a burial): at most the two decks' 108 cards.
pub const CARDS: usize = 108;
/// Hands in `preset_hands`, and bot seats in `bots` / `bot_seats`.
pub const SEATS: usize = 8;
/// A bot name (`record::MAX_BOT_NAME_BYTES`), in `bots` and `auto_policy`.
pub const BOT_NAME_BYTES: usize = crate::service::record::MAX_BOT_NAME_BYTES;
/// A page token or stream cursor of any rpc (every real one is under 32 bytes).
pub const TOKEN_BYTES: usize = 64;
/// A declared key rank (`10`, `A`…).
pub const DECLARED_KEY_BYTES: usize = 8;
/// Hand types in a GetHints filter, and each type's name.
pub const HINT_TYPES: usize = 32;
pub const HINT_TYPE_BYTES: usize = 32;
/// AbortGame's reason.
pub const ABORT_REASON_BYTES: usize = 512;
/// ValidateVariant's file name (its source is bounded by the message size limit only).
pub const FILE_NAME_BYTES: usize = 128;

/// A request whose fields are within their documented bounds.
pub trait Bounded {
    /// Refuses the first field over its bound.
    fn bounds(&self) -> Result<(), ApiError>;
}

/// A field over its bound: `reason`, naming the field and the limit, quoting none of it.
fn over(reason: Reason, field: &str, what: &str, size: usize, limit: usize) -> ApiError {
    ApiError::new(
        reason,
        format!("{field} has {size} {what}; at most {limit}"),
    )
    .with("field", field)
    .with("limit", limit.to_string())
}

/// A text field of at most `limit` bytes.
fn text(field: &str, value: &str, limit: usize, reason: Reason) -> Result<(), ApiError> {
    if value.len() > limit {
        return Err(over(reason, field, "bytes", value.len(), limit));
    }
    Ok(())
}

/// A list field of at most `limit` elements.
fn list(field: &str, len: usize, limit: usize) -> Result<(), ApiError> {
    if len > limit {
        return Err(over(Reason::BadRequest, field, "elements", len, limit));
    }
    Ok(())
}

fn game_id(value: &str) -> Result<(), ApiError> {
    text("game_id", value, GAME_ID_BYTES, Reason::NoSuchGame)
}

fn request_id(value: &str) -> Result<(), ApiError> {
    text("request_id", value, REQUEST_ID_BYTES, Reason::BadRequest)
}

/// The fields both games' CreateGame share: variant, players, options, seed, request id.
fn create_base<'a>(
    variant: &str,
    players: &[String],
    options: impl ExactSizeIterator<Item = (&'a String, &'a String)>,
    seed: &str,
    rid: &str,
) -> Result<(), ApiError> {
    text("variant", variant, VARIANT_BYTES, Reason::UnknownVariant)?;
    list("players", players.len(), PLAYERS)?;
    for name in players {
        text("players", name, PLAYER_NAME_BYTES, Reason::BadRequest)?;
    }
    if options.len() > OPTIONS {
        return Err(over(
            Reason::BadOption,
            "options",
            "entries",
            options.len(),
            OPTIONS,
        ));
    }
    for (name, value) in options {
        text("options", name, OPTION_NAME_BYTES, Reason::BadOption)?;
        text("options", value, OPTION_VALUE_BYTES, Reason::BadOption)?;
    }
    text("seed", seed, SEED_BYTES, Reason::BadRequest)?;
    request_id(rid)
}

macro_rules! only_a_game_id {
    ($($t:ty),*) => {
        $(impl Bounded for $t {
            fn bounds(&self) -> Result<(), ApiError> {
                game_id(&self.game_id)
            }
        })*
    };
}

macro_rules! nothing_to_bound {
    ($($t:ty),*) => {
        $(impl Bounded for $t {
            fn bounds(&self) -> Result<(), ApiError> {
                Ok(())
            }
        })*
    };
}

only_a_game_id!(
    pb::GetStateRequest,
    sj::GetStateRequest,
    sj::WatchGameRequest,
    sj::GetHintsRequest,
    sj::LeaveGameRequest,
    sj::GetReplayRequest
);
nothing_to_bound!(pb::ListVariantsRequest, pb::ReloadVariantsRequest);

impl Bounded for pb::CreateGameRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        create_base(
            &self.variant,
            &self.players,
            self.options.iter(),
            &self.seed,
            &self.request_id,
        )?;
        if let Some(preset) = &self.preset_hands {
            list("preset_hands", preset.hands.len(), SEATS)?;
            for hand in &preset.hands {
                list("preset_hands", hand.cards.len(), CARDS)?;
            }
        }
        list("bots", self.bots.len(), SEATS)?;
        for name in self.bots.values() {
            text("bots", name, BOT_NAME_BYTES, Reason::BadRequest)?;
        }
        text(
            "auto_policy",
            &self.auto_policy,
            BOT_NAME_BYTES,
            Reason::BadRequest,
        )
    }
}

impl Bounded for pb::SubmitPlayRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        list("cards", self.cards.len(), CARDS)?;
        if let Some(d) = &self.declared {
            text(
                "declared.key",
                &d.key,
                DECLARED_KEY_BYTES,
                Reason::BadRequest,
            )?;
        }
        request_id(&self.request_id)
    }
}

impl Bounded for pb::WatchGameRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        text("cursor", &self.cursor, TOKEN_BYTES, Reason::BadRequest)
    }
}

impl Bounded for pb::GetHintsRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        text(
            "page_token",
            &self.page_token,
            TOKEN_BYTES,
            Reason::BadRequest,
        )?;
        list("types", self.types.len(), HINT_TYPES)?;
        for t in &self.types {
            text("types", t, HINT_TYPE_BYTES, Reason::BadRequest)?;
        }
        Ok(())
    }
}

impl Bounded for pb::LeaveGameRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        request_id(&self.request_id)
    }
}

impl Bounded for pb::GetReplayRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        text(
            "page_token",
            &self.page_token,
            TOKEN_BYTES,
            Reason::BadRequest,
        )
    }
}

impl Bounded for pb::ListGamesRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        text(
            "page_token",
            &self.page_token,
            TOKEN_BYTES,
            Reason::BadRequest,
        )
    }
}

impl Bounded for pb::AbortGameRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        text(
            "reason",
            &self.reason,
            ABORT_REASON_BYTES,
            Reason::BadRequest,
        )
    }
}

impl Bounded for pb::ValidateVariantRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        text(
            "file_name",
            &self.file_name,
            FILE_NAME_BYTES,
            Reason::BadRequest,
        )
    }
}

impl Bounded for sj::CreateGameRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        create_base(
            &self.variant,
            &self.players,
            self.options.iter(),
            &self.seed,
            &self.request_id,
        )?;
        list("deck", self.deck.len(), CARDS)?;
        list("bot_seats", self.bot_seats.len(), SEATS)
    }
}

impl Bounded for sj::SubmitActionRequest {
    fn bounds(&self) -> Result<(), ApiError> {
        game_id(&self.game_id)?;
        if let Some(sj::submit_action_request::Action::Bury(b)) = &self.action {
            list("bury.cards", b.cards.len(), CARDS)?;
        }
        request_id(&self.request_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_over_its_bound_is_refused_without_its_value() {
        let req = pb::GetStateRequest {
            game_id: "g".repeat(10_240),
            ..Default::default()
        };
        let e = req.bounds().unwrap_err();
        assert_eq!(e.reason, Reason::NoSuchGame);
        assert_eq!(e.message, "game_id has 10240 bytes; at most 128");
        let at_limit = pb::GetStateRequest {
            game_id: "g".repeat(GAME_ID_BYTES),
            ..Default::default()
        };
        assert!(at_limit.bounds().is_ok());
        let create = pb::CreateGameRequest {
            options: [("x".repeat(65), "1".to_string())].into(),
            ..Default::default()
        };
        assert_eq!(create.bounds().unwrap_err().reason, Reason::BadOption);
        let create = pb::CreateGameRequest {
            variant: "v".repeat(65),
            ..Default::default()
        };
        assert_eq!(create.bounds().unwrap_err().reason, Reason::UnknownVariant);
    }
}
