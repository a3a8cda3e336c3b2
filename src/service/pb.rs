//! The generated protobuf and tonic code of `shuangkou.v1`, kept in this one module; only
//! `wire`, `rpc` and `status` (and the server wiring) touch these types.

#![allow(clippy::all, missing_docs, rustdoc::all)]

tonic::include_proto!("shuangkou.v1");

/// The encoded descriptor set of `proto/` (for server reflection).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/shuangkou_descriptor.bin"));
