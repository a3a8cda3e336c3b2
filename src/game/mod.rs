//! The deal engine: the table as a deterministic, replayable state machine.
//!
//! Pure and synchronous: no async, wire or script types; "now" is an input. Variants plug in
//! through [`hooks::VariantHooks`].
//!
//! - [`table`]: [`Game`], actions, events, the log and replay;
//! - [`flow`]: the turn rules (turn order, trick end, 接風, deal end, places, outcome), shared
//!   with the bots' sampled worlds;
//! - [`view`]: what each viewer may see;
//! - [`hooks`]: the contract with the variant scripts;
//! - [`bombs`]: bombs as scoring facts, and the best arrangement of the bombs left in a hand;
//! - [`engine_error`]: the rejections every game on the engine shares (also 升級's);
//! - [`testing`]: a plain-Rust implementation of the hooks for tests and tools.

pub mod bombs;
pub mod engine_error;
pub mod flow;
pub mod hooks;
pub mod sim;
pub mod table;
pub mod testing;
pub mod view;

pub use engine_error::EngineError;
pub use table::{
    Action, DealResult, ENGINE_VERSION, Entry, Event, Game, GameConfig, GameError, HashScheme,
    Phase, RESULTS_KEPT, Results, Top,
};
pub use view::{SeatView, View, Viewer};
