//! Metrics: every metric name and label set, declared in one place, and the Prometheus exporter.
//!
//! Only adapters (the service, the variant host, the store) record metrics, through the helpers
//! below; the core never does. Histograms have explicit buckets (real Prometheus histograms, not
//! summaries). Names are prefixed `shuangkou_`.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::SocketAddr;
use std::sync::{LazyLock, RwLock};

use metrics::{
    Counter, Histogram, counter, describe_counter, describe_gauge, describe_histogram, gauge,
    histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};

/// rpc count by `method` and `code`.
pub const RPC_REQUESTS: &str = "shuangkou_rpc_requests_total";
/// rpc latency by `method` and `code`.
pub const RPC_DURATION: &str = "shuangkou_rpc_duration_seconds";
/// Games created by `variant`.
pub const GAMES_CREATED: &str = "shuangkou_games_created_total";
/// Games in progress by `variant`.
pub const GAMES_ACTIVE: &str = "shuangkou_games_active";
/// Games finished by `variant`.
pub const GAMES_FINISHED: &str = "shuangkou_games_finished_total";
/// Deals settled by `variant` and `outcome`.
pub const DEALS_SETTLED: &str = "shuangkou_deals_settled_total";
/// Plays by `variant` and `type`.
pub const PLAYS: &str = "shuangkou_plays_total";
/// Bombs played by `variant`, `type` (the bomb's hand type) and `stars` (its star level, or
/// `none` in a variant whose bomb order counts no stars): one label set for every series.
pub const BOMBS: &str = "shuangkou_bombs_total";
/// Rejected requests by `reason`.
pub const REJECTIONS: &str = "shuangkou_rejections_total";
/// Variant script calls by `variant`, `version` and `hook`.
pub const SCRIPT_CALLS: &str = "shuangkou_script_calls_total";
/// Variant script call latency by `variant` and `hook`.
pub const SCRIPT_DURATION: &str = "shuangkou_script_duration_seconds";
/// Variant script errors by `variant`, `version` and `hook`.
pub const SCRIPT_ERRORS: &str = "shuangkou_script_errors_total";
/// Sandbox limit hits by `variant` and `version`.
pub const SCRIPT_LIMIT_HITS: &str = "shuangkou_script_limit_hits_total";
/// Variant reloads by `result` (`activated`, `unchanged`, `rejected`).
pub const VARIANT_RELOADS: &str = "shuangkou_variant_reloads_total";
/// Open WatchGame streams.
pub const WATCH_STREAMS: &str = "shuangkou_watch_streams_open";
/// Turn deadlines that passed (the engine played for the seat, 托管), by `variant`.
pub const TURN_TIMEOUTS: &str = "shuangkou_turn_timeouts_total";
/// Plays and passes the engine made for a seat (timeouts and disconnected seats), by `variant`.
pub const AUTO_PLAYS: &str = "shuangkou_auto_plays_total";
/// Presence changes logged by this process, by `variant` and `change` (`disconnect`,
/// `reconnect`).
pub const PRESENCE: &str = "shuangkou_presence_changes_total";
/// Escapes (逃跑) by `variant` and `reason` (`left`, `disconnected`, `timeouts`).
pub const ESCAPES: &str = "shuangkou_escapes_total";
/// Store operation latency by `store` and `op`.
pub const STORE_DURATION: &str = "shuangkou_store_duration_seconds";
/// Store errors by `store` and `op`.
pub const STORE_ERRORS: &str = "shuangkou_store_errors_total";
/// Time of each phase of the embedded store's group commits, by `phase` (`queued`: an operation's
/// wait from its submission to the start of its batch; `plan`, `write`, `sync` (fdatasync),
/// `apply` (the index) and `reply`: one batch each).
pub const STORE_COMMIT_DURATION: &str = "shuangkou_store_commit_phase_seconds";
/// Operations per group commit of the embedded store.
pub const STORE_COMMIT_OPS: &str = "shuangkou_store_commit_ops";
/// 1 while the store is reachable, by `store`.
pub const STORE_UP: &str = "shuangkou_store_up";
/// Requests carrying an idempotency key already used, by `rpc` and `outcome` (`replayed`: the
/// same request, answered with the first result; `conflict`: a different request, refused).
pub const IDEMPOTENT_REQUESTS: &str = "shuangkou_idempotent_requests_total";
/// Requests refused for their size before decoding (over the message size limit).
pub const OVERSIZED_REQUESTS: &str = "shuangkou_oversized_requests_total";
pub const SNAPSHOTS: &str = "shuangkou_snapshots_total";

/// Latency buckets in seconds, from 50 µs to 10 s.
const LATENCY_BUCKETS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 10.0,
];

/// Operations per commit: powers of two up to the largest batch.
const BATCH_BUCKETS: [f64; 11] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// Installs the Prometheus exporter with an HTTP listener serving `/metrics` on `addr`, and
/// describes every metric. Must run inside a Tokio runtime.
pub fn install(addr: SocketAddr) -> Result<(), String> {
    PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &LATENCY_BUCKETS)
        .map_err(|e| e.to_string())?
        .set_buckets_for_metric(Matcher::Full(STORE_COMMIT_OPS.into()), &BATCH_BUCKETS)
        .map_err(|e| e.to_string())?
        .install()
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    describe();
    Ok(())
}

/// Every counter with its description.
const COUNTERS: [(&str, &str); 19] = [
    (RPC_REQUESTS, "gRPC requests by method and status code"),
    (GAMES_CREATED, "Games created by variant"),
    (GAMES_FINISHED, "Games finished by variant"),
    (DEALS_SETTLED, "Deals settled by variant and outcome"),
    (PLAYS, "Plays by variant and combination type"),
    (
        BOMBS,
        "Bombs played by variant, type and star level (none: no star order)",
    ),
    (REJECTIONS, "Rejected requests by reason"),
    (SCRIPT_CALLS, "Variant script hook calls"),
    (SCRIPT_ERRORS, "Variant script hook errors"),
    (SCRIPT_LIMIT_HITS, "Variant script sandbox limit hits"),
    (VARIANT_RELOADS, "Variant reloads by result"),
    (TURN_TIMEOUTS, "Turn deadlines passed (托管) by variant"),
    (AUTO_PLAYS, "Plays and passes made by the engine for a seat"),
    (PRESENCE, "Disconnects and reconnects logged, by change"),
    (ESCAPES, "Escapes by variant and reason"),
    (STORE_ERRORS, "Store errors by operation"),
    (
        IDEMPOTENT_REQUESTS,
        "Requests with a reused idempotency key, by rpc and outcome (replayed, conflict)",
    ),
    (
        OVERSIZED_REQUESTS,
        "Requests refused over the message size limit",
    ),
    (
        SNAPSHOTS,
        "Stored game snapshots read, by outcome (used, or why one was ignored)",
    ),
];

/// Every gauge with its description.
const GAUGES: [(&str, &str); 3] = [
    (GAMES_ACTIVE, "Games in progress by variant"),
    (WATCH_STREAMS, "Open WatchGame streams"),
    (STORE_UP, "1 while the store is reachable"),
];

/// Every histogram of seconds with its description.
const SECONDS_HISTOGRAMS: [(&str, &str); 4] = [
    (RPC_DURATION, "gRPC request latency"),
    (SCRIPT_DURATION, "Variant script hook latency"),
    (STORE_DURATION, "Store operation latency"),
    (
        STORE_COMMIT_DURATION,
        "Embedded store group commit time by phase",
    ),
];

fn describe() {
    for (name, text) in COUNTERS {
        describe_counter!(name, text);
    }
    for (name, text) in GAUGES {
        describe_gauge!(name, text);
    }
    for (name, text) in SECONDS_HISTOGRAMS {
        describe_histogram!(name, metrics::Unit::Seconds, text);
    }
    describe_histogram!(
        STORE_COMMIT_OPS,
        "Operations per embedded store group commit"
    );
}

/// Metric handles by label values, each registered on its first use and kept for the process:
/// `counter!` and `histogram!` build the metric's key on every call (a `Vec` of labels, a `String`
/// for each label that is not `'static`) and look it up in the recorder, which the calls on every
/// request and every play (rpcs, store operations, plays) need not repeat. A handle records into
/// the recorder installed when it was registered: the server installs its recorder before it opens
/// the store or serves. The label values are the server's own (methods, codes, operations, hand
/// types, the variants of the registry), so the handles are a few hundred at most.
struct Handles<K, H>(LazyLock<RwLock<HashMap<K, H>>>);

impl<K: Eq + Hash, H> Handles<K, H> {
    const fn new() -> Handles<K, H> {
        Handles(LazyLock::new(|| RwLock::new(HashMap::new())))
    }

    /// Runs `f` with the handle of `key`, registered by `register` on first use.
    fn with<Q>(&self, key: &Q, register: impl FnOnce() -> (K, H), f: impl FnOnce(&H))
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        if let Some(h) = self.0.read().unwrap_or_else(|e| e.into_inner()).get(key) {
            return f(h);
        }
        let (key, handle) = register();
        let mut handles = self.0.write().unwrap_or_else(|e| e.into_inner());
        f(handles.entry(key).or_insert(handle));
    }
}

/// The rpc count and latency handles by method and code.
static RPCS: Handles<(&str, &str), (Counter, Histogram)> = Handles::new();
/// The store latency handles by store and operation.
static STORE_OPS: Handles<(&str, &str), Histogram> = Handles::new();
/// The play count handles by type, then variant.
static PLAYS_BY_TYPE: Handles<&str, Handles<String, Counter>> = Handles::new();

/// Records one rpc.
pub fn rpc(method: &'static str, code: &'static str, seconds: f64) {
    let register = || {
        let count = counter!(RPC_REQUESTS, "method" => method, "code" => code);
        let time = histogram!(RPC_DURATION, "method" => method, "code" => code);
        ((method, code), (count, time))
    };
    RPCS.with(&(method, code), register, |(count, time)| {
        count.increment(1);
        time.record(seconds);
    });
}

/// Records a rejection.
pub fn rejection(reason: &'static str) {
    counter!(REJECTIONS, "reason" => reason).increment(1);
}

/// Records a created game.
pub fn game_created(variant: &str) {
    counter!(GAMES_CREATED, "variant" => variant.to_string()).increment(1);
}

/// Records a game finished by this process.
pub fn game_finished(variant: &str) {
    counter!(GAMES_FINISHED, "variant" => variant.to_string()).increment(1);
}

/// Adjusts the gauge of games in progress held by this process (created, recovered or loaded:
/// +1; finished here or elsewhere: -1). Only the service's game cache calls it.
pub fn games_active(variant: &str, delta: f64) {
    gauge!(GAMES_ACTIVE, "variant" => variant.to_string()).increment(delta);
}

/// Records a turn deadline that passed.
pub fn turn_timeout(variant: &str) {
    counter!(TURN_TIMEOUTS, "variant" => variant.to_string()).increment(1);
}

/// Records a play or pass the engine made for a seat.
pub fn auto_play(variant: &str) {
    counter!(AUTO_PLAYS, "variant" => variant.to_string()).increment(1);
}

/// Records a logged disconnect or reconnect.
pub fn presence(variant: &str, change: &'static str) {
    counter!(PRESENCE, "variant" => variant.to_string(), "change" => change).increment(1);
}

/// Records an escape.
pub fn escape(variant: &str, reason: &'static str) {
    counter!(ESCAPES, "variant" => variant.to_string(), "reason" => reason).increment(1);
}

/// Records a settled deal.
pub fn deal_settled(variant: &str, outcome: &'static str) {
    counter!(DEALS_SETTLED, "variant" => variant.to_string(), "outcome" => outcome).increment(1);
}

/// Records a play (and its bomb, if it is one).
pub fn play(variant: &str, kind: &'static str, stars: Option<u8>, is_bomb: bool) {
    let by_variant = || (kind, Handles::new());
    PLAYS_BY_TYPE.with(&kind, by_variant, |variants| {
        let register = || {
            let count = counter!(PLAYS, "variant" => variant.to_string(), "type" => kind);
            (variant.to_string(), count)
        };
        variants.with(variant, register, |count| count.increment(1));
    });
    if is_bomb {
        let stars = stars.map_or_else(|| "none".to_string(), |s| s.to_string());
        counter!(BOMBS, "variant" => variant.to_string(), "type" => kind, "stars" => stars)
            .increment(1);
    }
}

/// Records a script hook call.
pub fn script_call(
    variant: &str,
    version: &str,
    hook: &'static str,
    seconds: f64,
    error: bool,
    limit: bool,
) {
    let short = &version[..version.len().min(12)];
    counter!(SCRIPT_CALLS, "variant" => variant.to_string(), "version" => short.to_string(), "hook" => hook).increment(1);
    histogram!(SCRIPT_DURATION, "variant" => variant.to_string(), "hook" => hook).record(seconds);
    if error {
        counter!(SCRIPT_ERRORS, "variant" => variant.to_string(), "version" => short.to_string(), "hook" => hook).increment(1);
    }
    if limit {
        counter!(SCRIPT_LIMIT_HITS, "variant" => variant.to_string(), "version" => short.to_string()).increment(1);
    }
}

/// Records a variant reload outcome.
pub fn variant_reload(result: &'static str) {
    counter!(VARIANT_RELOADS, "result" => result).increment(1);
}

/// Adjusts the open-watch-stream gauge.
pub fn watch_streams(delta: f64) {
    gauge!(WATCH_STREAMS).increment(delta);
}

/// Records a store operation.
pub fn store_op(store: &'static str, op: &'static str, seconds: f64, ok: bool) {
    let register = || {
        let time = histogram!(STORE_DURATION, "store" => store, "op" => op);
        ((store, op), time)
    };
    STORE_OPS.with(&(store, op), register, |time| time.record(seconds));
    if !ok {
        counter!(STORE_ERRORS, "store" => store, "op" => op).increment(1);
    }
}

/// Records one phase of an embedded store commit.
pub fn store_commit_phase(phase: &'static str, seconds: f64) {
    histogram!(STORE_COMMIT_DURATION, "phase" => phase).record(seconds);
}

/// Sets the store reachability gauge.
pub fn store_up(store: &'static str, up: bool) {
    gauge!(STORE_UP, "store" => store).set(if up { 1.0 } else { 0.0 });
}

/// Records a request whose idempotency key was used before (`replayed` or `conflict`).
pub fn idempotent(rpc: &'static str, outcome: &'static str) {
    counter!(IDEMPOTENT_REQUESTS, "rpc" => rpc, "outcome" => outcome).increment(1);
}

/// Records a stored snapshot read: `used`, or why it was ignored (`corrupt`, `other_format`,
/// `gap`, `hash_mismatch`, `not_in_log`, `resume_failed`).
pub fn snapshot(outcome: &'static str) {
    counter!(SNAPSHOTS, "outcome" => outcome).increment(1);
}

/// Records a request refused over the message size limit.
pub fn oversized() {
    counter!(OVERSIZED_REQUESTS).increment(1);
}

/// Records a game of another family created (`game` label: `shengji`).
pub fn family_game_created(game: &'static str, variant: &str) {
    counter!(GAMES_CREATED, "game" => game, "variant" => variant.to_string()).increment(1);
}

/// Records a game of another family finished by this process.
pub fn family_game_finished(game: &'static str, variant: &str) {
    counter!(GAMES_FINISHED, "game" => game, "variant" => variant.to_string()).increment(1);
}

/// Adjusts the gauge of games of another family in progress.
pub fn family_games_active(game: &'static str, variant: &str, delta: f64) {
    gauge!(GAMES_ACTIVE, "game" => game, "variant" => variant.to_string()).increment(delta);
}

/// Records a card played in a game of another family.
pub fn family_play(game: &'static str, variant: &str) {
    counter!(PLAYS, "game" => game, "variant" => variant.to_string(), "type" => "card")
        .increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handle is registered once per label values and used by every later call with them.
    #[test]
    fn handles_are_registered_once_per_label_values() {
        let handles: Handles<(&str, &str), usize> = Handles::new();
        let mut registered = 0;
        let mut seen = Vec::new();
        for (method, code) in [("A", "OK"), ("B", "OK"), ("A", "OK"), ("A", "NOT_FOUND")] {
            let register = || {
                registered += 1;
                ((method, code), registered)
            };
            handles.with(&(method, code), register, |&h| seen.push(h));
        }
        assert_eq!(registered, 3);
        assert_eq!(seen, [1, 2, 1, 3]);
        let nested: Handles<&str, Handles<String, u8>> = Handles::new();
        for (kind, variant, handle) in
            [("bomb", "classic", 1), ("bomb", "jj", 2), ("bomb", "jj", 3)]
        {
            let mut got = 0;
            nested.with(
                &kind,
                || (kind, Handles::new()),
                |variants| variants.with(variant, || (variant.to_string(), handle), |&h| got = h),
            );
            assert_eq!(got, handle.min(2), "{kind} {variant}");
        }
    }

    /// Every metric name this file declares (`pub const NAME: &str = "…"`, read from its text,
    /// not from the tables) is described exactly once, and nothing else is.
    #[test]
    fn every_declared_metric_is_described_once() {
        let mut declared: Vec<&str> = include_str!("metrics.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("pub const "))
            .filter_map(|l| l.split_once(": &str = \""))
            .map(|(_, value)| value.trim_end_matches("\";"))
            .collect();
        let mut described: Vec<&str> = COUNTERS
            .iter()
            .chain(&GAUGES)
            .chain(&SECONDS_HISTOGRAMS)
            .map(|&(name, _)| name)
            .chain([STORE_COMMIT_OPS])
            .collect();
        declared.sort_unstable();
        described.sort_unstable();
        assert_eq!(declared.len(), 27);
        assert_eq!(described, declared);
    }
}
