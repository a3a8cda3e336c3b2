//! Every rejection of the service as one error type ([`ApiError`]), every domain error's one
//! mapping to it (`From` impls: engine, card and store errors), and its one mapping to a gRPC
//! status.
//!
//! Each rejection has a stable machine-readable reason (the `ErrorReason` enum of
//! `proto/shuangkou/v1/`): it is the prefix of the status message (`NOT_YOUR_TURN: …`) and the
//! `reason` of a `google.rpc.ErrorInfo` detail in domain `shuangkou.v1`, with extra metadata
//! where a client needs it (`current_seq` on `STALE_SEQ`, the interpretations on
//! `AMBIGUOUS_PLAY`).
//!
//! Converting is pure: no metric is recorded here (the rpc layer counts rejections, in
//! `rpc/mod.rs`). Depends on no other module of the service.

use std::collections::HashMap;
use std::fmt;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::cards::CardError;
use crate::game::{EngineError, GameError};
use crate::hand::PlayError;
use crate::quote::bounded;
/// The one shortening of a client's value quoted in a refusal.
pub use crate::quote::clip;
use crate::store::StoreError;

/// The ErrorInfo domain of this API.
pub const DOMAIN: &str = "shuangkou.v1";

/// Stable rejection reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    BadCardId,
    DuplicateCard,
    NotACombination,
    AmbiguousPlay,
    DeclaredMismatch,
    UnknownVariant,
    BadOption,
    BadRequest,
    NotYourTurn,
    CardsNotHeld,
    DoesNotBeat,
    MustLead,
    GameOver,
    GameInProgress,
    StaleSeq,
    NoSuchGame,
    Unauthenticated,
    PermissionDenied,
    LimitExceeded,
    ScriptFailed,
    StoreFailed,
    Unavailable,
    IdempotencyConflict,
    InvalidToken,
    TokenKeyChanged,
    CursorOutOfRange,
}

impl Reason {
    /// Every reason.
    pub const ALL: [Reason; 26] = [
        Reason::BadCardId,
        Reason::DuplicateCard,
        Reason::NotACombination,
        Reason::AmbiguousPlay,
        Reason::DeclaredMismatch,
        Reason::UnknownVariant,
        Reason::BadOption,
        Reason::BadRequest,
        Reason::NotYourTurn,
        Reason::CardsNotHeld,
        Reason::DoesNotBeat,
        Reason::MustLead,
        Reason::GameOver,
        Reason::GameInProgress,
        Reason::StaleSeq,
        Reason::NoSuchGame,
        Reason::Unauthenticated,
        Reason::PermissionDenied,
        Reason::LimitExceeded,
        Reason::ScriptFailed,
        Reason::StoreFailed,
        Reason::Unavailable,
        Reason::IdempotencyConflict,
        Reason::InvalidToken,
        Reason::TokenKeyChanged,
        Reason::CursorOutOfRange,
    ];

    /// The stable name: the name of the proto's `ErrorReason` value (with `_TOKEN`/`_SERVER`
    /// suffixes where a reason would repeat a gRPC code's name).
    pub const fn name(self) -> &'static str {
        match self {
            Reason::BadCardId => "BAD_CARD_ID",
            Reason::DuplicateCard => "DUPLICATE_CARD",
            Reason::NotACombination => "NOT_A_COMBINATION",
            Reason::AmbiguousPlay => "AMBIGUOUS_PLAY",
            Reason::DeclaredMismatch => "DECLARED_MISMATCH",
            Reason::UnknownVariant => "UNKNOWN_VARIANT",
            Reason::BadOption => "BAD_OPTION",
            Reason::BadRequest => "BAD_REQUEST",
            Reason::NotYourTurn => "NOT_YOUR_TURN",
            Reason::CardsNotHeld => "CARDS_NOT_HELD",
            Reason::DoesNotBeat => "DOES_NOT_BEAT",
            Reason::MustLead => "MUST_LEAD",
            Reason::GameOver => "GAME_OVER",
            Reason::GameInProgress => "GAME_IN_PROGRESS",
            Reason::StaleSeq => "STALE_SEQ",
            Reason::NoSuchGame => "NO_SUCH_GAME",
            Reason::Unauthenticated => "UNAUTHENTICATED_TOKEN",
            Reason::PermissionDenied => "PERMISSION_DENIED_TOKEN",
            Reason::LimitExceeded => "LIMIT_EXCEEDED",
            Reason::ScriptFailed => "SCRIPT_FAILED",
            Reason::StoreFailed => "STORE_FAILED",
            Reason::Unavailable => "UNAVAILABLE_SERVER",
            Reason::IdempotencyConflict => "IDEMPOTENCY_CONFLICT",
            Reason::InvalidToken => "INVALID_TOKEN",
            Reason::TokenKeyChanged => "TOKEN_KEY_CHANGED",
            Reason::CursorOutOfRange => "CURSOR_OUT_OF_RANGE",
        }
    }

    /// The gRPC code of the reason.
    pub const fn code(self) -> Code {
        match self {
            Reason::BadCardId
            | Reason::DuplicateCard
            | Reason::NotACombination
            | Reason::AmbiguousPlay
            | Reason::DeclaredMismatch
            | Reason::UnknownVariant
            | Reason::BadOption
            | Reason::BadRequest => Code::InvalidArgument,
            Reason::NotYourTurn
            | Reason::CardsNotHeld
            | Reason::DoesNotBeat
            | Reason::MustLead
            | Reason::GameOver
            | Reason::GameInProgress
            | Reason::TokenKeyChanged => Code::FailedPrecondition,
            Reason::IdempotencyConflict => Code::AlreadyExists,
            Reason::StaleSeq => Code::Aborted,
            Reason::NoSuchGame => Code::NotFound,
            Reason::Unauthenticated | Reason::InvalidToken => Code::Unauthenticated,
            Reason::PermissionDenied => Code::PermissionDenied,
            Reason::LimitExceeded => Code::ResourceExhausted,
            Reason::ScriptFailed | Reason::StoreFailed => Code::Internal,
            Reason::Unavailable => Code::Unavailable,
            Reason::CursorOutOfRange => Code::OutOfRange,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rejection: reason, message and optional metadata for the ErrorInfo detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub reason: Reason,
    pub message: String,
    pub metadata: Vec<(String, String)>,
}

impl ApiError {
    pub fn new(reason: Reason, message: impl Into<String>) -> ApiError {
        ApiError {
            reason,
            message: message.into(),
            metadata: Vec::new(),
        }
    }

    /// Adds an ErrorInfo metadata entry.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<String>) -> ApiError {
        self.metadata.push((key.to_string(), value.into()));
        self
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// An engine rejection.
impl From<GameError> for ApiError {
    fn from(e: GameError) -> ApiError {
        let msg = e.to_string();
        match e {
            GameError::Engine(e) => ApiError::from(e),
            GameError::NoSuchPlayer(_) => ApiError::new(Reason::BadRequest, msg),
            GameError::NotYourTurn { .. } => ApiError::new(Reason::NotYourTurn, msg),
            GameError::CardsNotHeld => ApiError::new(Reason::CardsNotHeld, msg),
            GameError::MustLead => ApiError::new(Reason::MustLead, msg),
            GameError::Play(p) => ApiError::from(p),
            GameError::NotDue | GameError::NotDisconnected | GameError::WindowOpen => {
                ApiError::new(Reason::BadRequest, msg)
            }
        }
    }
}

/// A rejection of the engine itself, the same in both games. A failed script is logged here
/// (the client sees only that the game is unchanged).
impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let msg = e.to_string();
        match e {
            EngineError::GameOver => ApiError::new(Reason::GameOver, msg),
            EngineError::Hook(h) => {
                tracing::error!(hook = %h.hook, error = %h, "variant script failed; action rejected");
                ApiError::new(
                    Reason::ScriptFailed,
                    "the variant script failed; the game is unchanged",
                )
            }
            EngineError::Setup(_) | EngineError::Replay(_) => {
                ApiError::new(Reason::BadRequest, msg)
            }
        }
    }
}

/// A play the card rules refuse.
impl From<PlayError> for ApiError {
    fn from(p: PlayError) -> ApiError {
        match p {
            PlayError::NotACombination(_) => ApiError::new(Reason::NotACombination, p.to_string()),
            PlayError::DoesNotBeat(_) => ApiError::new(Reason::DoesNotBeat, p.to_string()),
            PlayError::DeclaredMismatch(_) => {
                ApiError::new(Reason::DeclaredMismatch, p.to_string())
            }
            PlayError::Ambiguous { ref options, .. } => {
                let list: Vec<String> = options
                    .iter()
                    .map(|h| match h.key() {
                        Some(k) => format!("{}:{}", h.kind, k),
                        None => h.kind.to_string(),
                    })
                    .collect();
                ApiError::new(Reason::AmbiguousPlay, p.to_string())
                    .with("interpretations", list.join(","))
            }
        }
    }
}

/// Card ids from a client (a play, preset hands).
impl From<CardError> for ApiError {
    fn from(e: CardError) -> ApiError {
        match e {
            CardError::DuplicateCard(_) => ApiError::new(Reason::DuplicateCard, e.to_string()),
            _ => ApiError::new(Reason::BadCardId, e.to_string()),
        }
    }
}

/// A store failure: the operation is not acknowledged.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::new(Reason::StoreFailed, e.to_string())
    }
}

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Status {
        status_in(&e, DOMAIN, e.reason.name())
    }
}

/// Longest message of a rejection as `grpc-message` carries it (percent-encoded: a byte outside
/// printable ASCII, or `%`, takes three; before the reason prefix), and longest ErrorInfo
/// metadata value (bytes). A message quotes client values [`clip`]ped; this cut is the last
/// guard, so a rejection's trailers stay under 1 KB whatever was sent (`grpc-status-details-bin`
/// is the base64 of the message and the ErrorInfo once more).
pub const MAX_MESSAGE_BYTES: usize = 240;
pub const MAX_METADATA_BYTES: usize = 128;

/// `message` cut (at a character, with an ellipsis) so that percent-encoded it takes at most
/// [`MAX_MESSAGE_BYTES`].
fn message_within_budget(message: &str) -> String {
    let cost = |c: char| match c {
        ' '..='~' if c != '%' => 1,
        _ => 3 * c.len_utf8(),
    };
    if message.chars().map(cost).sum::<usize>() <= MAX_MESSAGE_BYTES {
        return message.to_string();
    }
    // Room for the ellipsis (3 bytes, 9 encoded).
    let mut spent = 9;
    let mut out = String::new();
    for c in message.chars() {
        spent += cost(c);
        if spent > MAX_MESSAGE_BYTES {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// A rejection as a status of an API's ErrorInfo `domain`, with `reason` as its stable reason
/// (the prefix of the message): the reason's gRPC code, the error's metadata; message and
/// metadata values cut to their bounds.
pub fn status_in(e: &ApiError, domain: &str, reason: &str) -> Status {
    let metadata: HashMap<String, String> = e
        .metadata
        .iter()
        .map(|(k, v)| {
            (
                bounded(k, MAX_METADATA_BYTES),
                bounded(v, MAX_METADATA_BYTES),
            )
        })
        .collect();
    let details = ErrorDetails::with_error_info(reason, domain, metadata);
    let message = message_within_budget(&e.message);
    Status::with_error_details(e.reason.code(), format!("{reason}: {message}"), details)
}

/// The descriptors of `google/rpc/error_details.proto` (and `google/rpc/status.proto`), as
/// tonic-types ships them, under their googleapis paths: reflection serves them so a generic
/// client (grpcurl) decodes the `google.rpc.ErrorInfo` detail of every rejection.
pub fn error_details_descriptors() -> Result<prost_types::FileDescriptorSet, String> {
    use prost::Message;
    let mut fds = prost_types::FileDescriptorSet::decode(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .map_err(|e| format!("reflection: the error details descriptors: {e}"))?;
    let googleapis = |name: &str| match name {
        "error_details.proto" | "status.proto" => format!("google/rpc/{name}"),
        other => other.to_string(),
    };
    for file in &mut fds.file {
        file.name = file.name.as_deref().map(googleapis);
        for dep in &mut file.dependency {
            *dep = googleapis(dep);
        }
    }
    Ok(fds)
}

/// Reads the reason back from a status (for clients and tests).
pub fn reason_of(status: &Status) -> Option<String> {
    status
        .get_details_error_info()
        .map(|info| info.reason)
        .or_else(|| status.message().split(':').next().map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_carries_code_reason_and_metadata() {
        let s: Status = ApiError::new(Reason::StaleSeq, "current seq is 7")
            .with("current_seq", "7")
            .into();
        assert_eq!(s.code(), Code::Aborted);
        assert!(s.message().starts_with("STALE_SEQ: "));
        let info = s.get_details_error_info().unwrap();
        assert_eq!(info.reason, "STALE_SEQ");
        assert_eq!(info.domain, DOMAIN);
        assert_eq!(
            info.metadata.get("current_seq").map(String::as_str),
            Some("7")
        );
        assert_eq!(reason_of(&s).as_deref(), Some("STALE_SEQ"));
    }

    #[test]
    fn a_long_message_is_cut_to_its_encoded_budget() {
        let ascii = "a".repeat(1000);
        let s: Status = ApiError::new(Reason::BadRequest, ascii)
            .with("v", "b".repeat(1000))
            .into();
        // 240 encoded bytes: 231 ASCII ones and the ellipsis (three bytes, nine encoded).
        assert_eq!(s.message().len(), "BAD_REQUEST: ".len() + 231 + "…".len());
        let info = s.get_details_error_info().unwrap();
        assert_eq!(info.metadata["v"].len(), MAX_METADATA_BYTES + "…".len());
        // Three-byte characters cost nine encoded bytes each: 25 of them fit 240 with the
        // ellipsis.
        let wide: Status = ApiError::new(Reason::BadRequest, "\u{2066}".repeat(1000)).into();
        let kept = wide.message().trim_start_matches("BAD_REQUEST: ");
        assert_eq!(kept.chars().count(), 25 + 1, "{kept:?}");
        let short: Status = ApiError::new(Reason::BadRequest, "升級 needs 4 players").into();
        assert_eq!(short.message(), "BAD_REQUEST: 升級 needs 4 players");
    }

    #[test]
    fn every_reason_is_an_error_reason_of_the_proto() {
        for r in Reason::ALL {
            assert!(
                crate::service::pb::ErrorReason::from_str_name(r.name()).is_some(),
                "{} is not an ErrorReason value",
                r.name()
            );
        }
    }
}
