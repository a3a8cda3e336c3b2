//! Every rejection of the service as one error type, and its one mapping to a gRPC status.
//!
//! Each rejection has a stable machine-readable reason (API.md's error table): it is the prefix of
//! the status message (`NOT_YOUR_TURN: …`) and the `reason` of a `google.rpc.ErrorInfo` detail in
//! domain `shuangkou.v1`, with extra metadata where a client needs it (`current_seq` on
//! `STALE_SEQ`, the interpretations on `AMBIGUOUS_PLAY`).

use std::collections::HashMap;
use std::fmt;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

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
}

impl Reason {
    /// The stable name: the name of the proto's `ErrorReason` value (API.md's reasons, and
    /// `_TOKEN`/`_SERVER` suffixes where a reason would repeat a gRPC code's name).
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
            | Reason::GameInProgress => Code::FailedPrecondition,
            Reason::StaleSeq => Code::Aborted,
            Reason::NoSuchGame => Code::NotFound,
            Reason::Unauthenticated => Code::Unauthenticated,
            Reason::PermissionDenied => Code::PermissionDenied,
            Reason::LimitExceeded => Code::ResourceExhausted,
            Reason::ScriptFailed | Reason::StoreFailed => Code::Internal,
            Reason::Unavailable => Code::Unavailable,
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

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Status {
        crate::metrics::rejection(e.reason.name());
        let metadata: HashMap<String, String> = e.metadata.iter().cloned().collect();
        let details = ErrorDetails::with_error_info(e.reason.name(), DOMAIN, metadata);
        Status::with_error_details(e.reason.code(), e.to_string(), details)
    }
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
    fn every_reason_is_an_error_reason_of_the_proto() {
        use Reason::*;
        for r in [
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
        ] {
            assert!(
                crate::service::pb::ErrorReason::from_str_name(r.name()).is_some(),
                "{} is not an ErrorReason value",
                r.name()
            );
        }
    }
}
