//! The deal engine: the table as a deterministic, replayable state machine.
//!
//! Pure and synchronous: no async, wire or script types. Variants plug in through
//! [`hooks::VariantHooks`].

pub mod hooks;
