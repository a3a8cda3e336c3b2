//! The size of a rejection's trailers as a gRPC server sends them, from the `Status` a client
//! decoded: `grpc-status`, `grpc-message` (percent-encoded: every byte outside printable ASCII,
//! and `%`, takes three), `grpc-status-details-bin` (base64 of the details) and any other
//! metadata, each with its name.

use tonic::Status;

/// The most a rejection's trailers may take (issue 44: a standard client refuses large ones).
pub const MAX_TRAILER_BYTES: usize = 1024;

/// The bytes of `status`'s trailers: names and values.
pub fn trailer_bytes(status: &Status) -> usize {
    let message: usize = status
        .message()
        .bytes()
        .map(|b| {
            if (0x20..=0x7e).contains(&b) && b != b'%' {
                1
            } else {
                3
            }
        })
        .sum();
    let details = status.details().len().div_ceil(3) * 4;
    let others: usize = status
        .metadata()
        .iter()
        .map(|kv| match kv {
            tonic::metadata::KeyAndValueRef::Ascii(k, v) => {
                k.as_str().len() + v.as_encoded_bytes().len()
            }
            tonic::metadata::KeyAndValueRef::Binary(k, v) => {
                k.as_str().len() + v.as_encoded_bytes().len()
            }
        })
        .sum();
    "grpc-status".len()
        + 2
        + "grpc-message".len()
        + message
        + "grpc-status-details-bin".len()
        + details
        + others
}
