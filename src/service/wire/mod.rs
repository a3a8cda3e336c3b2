//! The wire boundary: every conversion between protobuf values (`pb`) and domain values, in
//! both directions. Malformed input is rejected here (`INVALID_ARGUMENT`) and goes no further;
//! nothing past this module sees a `pb` type except the rpc modules that call it.
//!
//! - [`bounds`]: the size bound of every string and list field of every request;
//! - [`request`]: requests in (a play, a create), declared interpretations, hand types;
//! - [`view`]: what a viewer is sent (plays, events, states, hints, deal and match results);
//! - [`replay`]: a [`Replay`](super::replay::Replay) to `GetReplayResponse` and back;
//! - [`variant`]: variants and reload reports (the admin service, ListVariants);
//! - [`shengji`]: the `shengji.v1` messages (升級).
//!
//! Depends on the core, the variant registry's values (`variant`), `record`, `replay` and
//! `status`; never on `session`, `games` or `rpc`.

pub mod bounds;
pub mod replay;
pub mod request;
pub mod shengji;
pub mod shengji_client;
pub mod variant;
pub mod view;

pub use request::{Action, action, declared, hand_type, new_game};
pub use view::{
    action_events, created, hints, leave_response, parse_cursor, play, points, state,
    submit_response,
};
