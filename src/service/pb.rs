//! The generated protobuf and tonic code of `shuangkou.v1`, kept in this one module; only
//! `wire`, `rpc` and `status` (and the server wiring) touch these types.

#![allow(clippy::all, missing_docs, rustdoc::all)]

tonic::include_proto!("shuangkou.v1");

/// The generated code of `shengji.v1` (升級), the second game's API.
pub mod shengji {
    tonic::include_proto!("shengji.v1");
}

/// The encoded descriptor set of `proto/` (both packages; for server reflection).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/shuangkou_descriptor.bin"));
