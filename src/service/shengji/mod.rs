//! The service of the second game, 升級 (`shengji.v1`), on the same engine as `shuangkou.v1`:
//! the same store and log (opaque records and entries, compare-and-append), the same tokens and
//! creation record (`service::record`), the same rejections and their status mapping
//! (`service::status`), the same prologue of every rpc (`rpc::unary`), the same variant host and
//! registry (one registry per game family) and metrics with a `game` label.
//!
//! - [`record`]: the creation record (Shuangkou's, plus the preset deck);
//! - [`table`]: one game's domain state (core match, log, events, idempotency keys);
//! - [`family`]: a table as the shared owner of live games (`service::games`: the cache, the
//!   schedule, the commit protocol) holds it, and its bot seats' turns;
//! - [`store`]: the separate store of the 升級 games.
//!
//! The protobuf side is in `wire::shengji` and `rpc::shengji`. Depends on the core
//! (`crate::shengji`), the variant host and the store; never on the wire types.

pub mod entry;
pub mod family;
pub mod hints;
pub mod history;
pub mod presence;
pub mod record;
pub mod store;
pub mod table;
pub mod turns;

use crate::service::status::{ApiError, Reason};
use crate::shengji::GameError;

/// The ErrorInfo domain of `shengji.v1`.
pub const DOMAIN: &str = "shengji.v1";

/// The ErrorInfo metadata key that names a 升級 rule a request broke (`MUST_FOLLOW`…); the
/// status reason is then that name instead of the shared reason's.
pub const RULE: &str = "rule";

fn rule(reason: Reason, name: &str, msg: String) -> ApiError {
    ApiError::new(reason, msg).with(RULE, name)
}

/// A core rejection as an [`ApiError`]: the reasons both games share keep their meaning, the
/// 升級 rules get their own names.
pub fn rejection(e: GameError) -> ApiError {
    let msg = e.to_string();
    match e {
        GameError::Engine(e) => ApiError::from(e),
        GameError::NoSuchSeat(_) => ApiError::new(Reason::BadRequest, msg),
        GameError::NotInDeck(_) => ApiError::new(Reason::BadCardId, msg),
        GameError::CardNotHeld { .. } | GameError::BuryNotHeld => {
            ApiError::new(Reason::CardsNotHeld, msg)
        }
        GameError::NotYourTurn { .. } => ApiError::new(Reason::NotYourTurn, msg),
        GameError::WrongPhase { .. } => rule(Reason::NotYourTurn, "WRONG_PHASE", msg),
        GameError::NotALevelCard { .. } => rule(Reason::CardsNotHeld, "NOT_A_LEVEL_CARD", msg),
        GameError::AlreadyDeclared { .. } => rule(Reason::GameInProgress, "ALREADY_DECLARED", msg),
        GameError::NotTheDealer { .. } => rule(Reason::NotYourTurn, "NOT_THE_DEALER", msg),
        GameError::BuryCount(_) => rule(Reason::BadRequest, "BURY_COUNT", msg),
        GameError::PointsBuried(_) => rule(Reason::DoesNotBeat, "POINTS_BURIED", msg),
        GameError::MustFollow { legal, .. } => {
            let ids: Vec<String> = legal.iter().map(|c| c.id().to_string()).collect();
            rule(Reason::DoesNotBeat, "MUST_FOLLOW", msg).with("legal", ids.join(","))
        }
    }
}
