//! The rpc statistics of one worker (latency histograms, outcomes, errors by code, games
//! completed and failed), merged at the end of the run.

use std::collections::BTreeMap;
use std::time::Instant;

use hdrhistogram::Histogram;

use crate::verify;

/// The rpcs timed, in the report's order; the transport baseline last. In `--game shengji`
/// SubmitPlay is `SubmitAction` with a card to play and SubmitAction every other action (deal,
/// declare, bury, leave).
pub const RPCS: [&str; 7] = [
    "CreateGame",
    "GetState",
    "GetHints",
    "SubmitPlay",
    "SubmitAction",
    "GetReplay",
    "Health/Check",
];

/// An index into [`RPCS`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rpc {
    Create,
    State,
    Hints,
    Submit,
    Act,
    Replay,
    Check,
}

pub const CHECK: usize = Rpc::Check as usize;

/// One worker's counters (merged at the end; no lock on the hot path).
pub struct Stats {
    pub latency: Vec<Histogram<u64>>,
    pub ok: [u64; RPCS.len()],
    pub errors: BTreeMap<(&'static str, String), u64>,
    /// First few error messages, for the report.
    pub samples: Vec<String>,
    pub deals: u64,
    pub desyncs: u64,
    pub games_created: u64,
    pub games_done: Vec<Done>,
    pub games_failed: u64,
}

impl Stats {
    pub fn new() -> Result<Stats, String> {
        let mut latency = Vec::new();
        for _ in RPCS {
            // Microseconds, 1 µs .. 100 s, 3 significant digits.
            latency.push(Histogram::new_with_bounds(1, 100_000_000, 3).map_err(|e| e.to_string())?);
        }
        Ok(Stats {
            latency,
            ok: [0; RPCS.len()],
            errors: BTreeMap::new(),
            samples: Vec::new(),
            deals: 0,
            desyncs: 0,
            games_created: 0,
            games_done: Vec::new(),
            games_failed: 0,
        })
    }

    /// Runs one rpc, recording its latency and outcome; its message when it succeeded.
    pub async fn timed<T>(
        &mut self,
        rpc: Rpc,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Option<T> {
        let t = Instant::now();
        let r = call.await;
        self.record(rpc, t, &r);
        r.ok().map(tonic::Response::into_inner)
    }

    /// CreateGame, timed and counted.
    pub async fn create<T>(
        &mut self,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Option<T> {
        let created = self.timed(Rpc::Create, call).await?;
        self.games_created += 1;
        Some(created)
    }

    pub fn record<T>(&mut self, rpc: Rpc, start: Instant, r: &Result<T, tonic::Status>) {
        let us = start.elapsed().as_micros().clamp(1, u128::from(u64::MAX)) as u64;
        let i = rpc as usize;
        self.latency[i].saturating_record(us);
        match r {
            Ok(_) => self.ok[i] += 1,
            Err(s) => self.error(RPCS[i], format!("{:?}", s.code()), s.message()),
        }
    }

    pub fn error(&mut self, rpc: &'static str, code: String, message: &str) {
        if self.samples.len() < 5 {
            self.samples.push(format!("{rpc} {code}: {message}"));
        }
        *self.errors.entry((rpc, code)).or_default() += 1;
    }

    pub fn merge(&mut self, other: Stats) {
        for (a, b) in self.latency.iter_mut().zip(&other.latency) {
            let _ = a.add(b);
        }
        for (a, b) in self.ok.iter_mut().zip(other.ok) {
            *a += b;
        }
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        for s in other.samples {
            if self.samples.len() < 5 {
                self.samples.push(s);
            }
        }
        self.deals += other.deals;
        self.desyncs += other.desyncs;
        self.games_created += other.games_created;
        self.games_done.extend(other.games_done);
        self.games_failed += other.games_failed;
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// A completed game of either family, for verification after the run.
pub enum Done {
    Shuangkou(verify::Finished),
    Shengji(crate::shengji_verify::Finished),
}
