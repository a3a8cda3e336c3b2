//! The gRPC service `shuangkou.v1`: thin tonic handlers over the deal engine, the variant
//! registry and the store.
//!
//! - [`pb`]: the generated code (only `convert` and the handlers see it);
//! - [`status`]: every rejection and its one mapping to a gRPC status;
//! - [`auth`]: tokens and keys.

pub mod auth;
pub mod pb;
pub mod status;
