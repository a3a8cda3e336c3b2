//! The rejections every game on the engine can raise, whatever its rules: the match is over, a
//! variant script failed, the setup is invalid, a replay diverged. Shuangkou's and 升級's
//! `GameError`s each wrap this type ([`EngineError`]) beside their own rule errors, so the
//! service maps these four to API reasons in one place.
//!
//! Pure: depends on the hooks' error and the replay's divergence only.

use crate::determinism::Divergence;
use crate::game::hooks::HookError;

/// A rejection that is the engine's, not one game's rules'.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// An action after the last deal was settled.
    #[error("the match is over")]
    GameOver,
    /// A variant hook failed or returned what the contract forbids; the action is rejected and
    /// the game is unchanged.
    #[error("variant hook failed: {0}")]
    Hook(#[from] HookError),
    /// A match configuration (or a state reached from one) that the rules cannot play.
    #[error("bad game setup: {0}")]
    Setup(String),
    /// A recorded log that does not re-execute to its recorded states.
    #[error("{0}")]
    Replay(#[from] Divergence),
}
