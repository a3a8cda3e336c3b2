//! The gRPC service `shuangkou.v1`: thin tonic rpcs over the deal engine, the variant registry
//! and the store. Dependencies point one way (docs/ARCHITECTURE.md draws them):
//! `rpc → access → games → session → core` and `rpc → wire → core`; nothing points back.
//!
//! - [`server`]: `shuangkou serve`, health, reflection, gRPC-Web, limits, drain;
//! - [`connections`]: a listener's connections served on hyper (HTTP/2 send buffer, drain);
//!   [`grpc_timeout`]: a request's deadline;
//! - [`app`]: the service as one value and its bootstrap (keys, store, variants, recovery);
//! - [`rpc`]: the rpcs, sharing one prologue/epilogue (caller, tracing, metrics, status);
//! - [`access`]: who calls and what they may do in a game;
//! - [`games`]: the only owner of live games (cache, counts, schedule, commit protocol);
//! - [`session`]: one game's domain state (engine, recent events and keys, bot seats);
//! - [`backlog`]: a session's bounded recent past; [`history`]: older events from the store;
//! - [`stored`]: a log entry's body and its checked replay;
//! - [`live_games`]: what both games' live-game owners share (count in progress, commit refusals);
//! - [`log_pages`]: a stored log read a page at a time (both families: retries, old actions);
//! - [`presence`]: who is connected (WatchGame streams), disconnects and reconnects;
//! - [`bots`]: the server-side bot driver (bot seats' turns, 托管 after a deadline);
//! - [`timers`]: the schedule's task (sleeps until the next due entry, workers play the turns);
//! - [`record`]: a game's stored creation record; [`auth`]: tokens and keys;
//! - [`replay`]: a finished match's replay and its verification (tests and clients use it);
//! - [`wire`]: every protobuf ↔ domain conversion; [`pb`]: the generated code;
//! - [`status`]: every rejection, every domain error's mapping to it, its gRPC status;
//! - [`clock`]: the one clock; [`heap`]: the binary's allocator and giving freed memory back;
//! - [`shengji`]: the second game's service (`shengji.v1`, 升級) on the same pieces.
//! - [`web`]: the web table (embedded single-page app and gRPC-Web on its own address).

pub mod access;
pub mod app;
pub mod auth;
pub mod backlog;
pub mod bots;
pub mod clock;
pub mod connections;
pub mod games;
pub mod grpc_timeout;
pub mod heap;
pub mod history;
pub mod live_games;
pub mod log_pages;
pub mod ownership;
pub mod pb;
pub mod presence;
pub mod record;
pub mod replay;
pub mod requested;
pub mod restored;
pub mod rpc;
pub mod server;
pub mod session;
pub mod shengji;
pub mod status;
pub mod stored;
pub mod timers;
pub mod web;
pub mod wire;
