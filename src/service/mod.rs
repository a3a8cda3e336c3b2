//! The gRPC service `shuangkou.v1`: thin tonic handlers over the deal engine, the variant
//! registry and the store.
//!
//! - [`pb`]: the generated code (only `convert`, `live` and the handlers see it);
//! - [`convert`]: wire ↔ domain values;
//! - [`status`]: every rejection and its one mapping to a gRPC status;
//! - [`auth`]: tokens and keys; [`record`]: a game's stored creation record;
//! - [`live`]: a game as the service holds it; [`handlers`]: the rpcs; [`server`]: wiring,
//!   health, reflection, gRPC-Web, limits, drain.

pub mod auth;
pub mod convert;
pub mod handlers;
pub mod live;
pub mod pb;
pub mod record;
pub mod server;
pub mod status;
