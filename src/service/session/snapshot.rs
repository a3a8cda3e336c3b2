//! A live game's snapshot at a deal's end, stored beside its log (`store::snapshots`), so a
//! rebuild (`service::rebuild`) and a reader from an old seq (`history`) start from the newest
//! snapshot before where they must be and replay only the entries after it.
//!
//! A snapshot is postcard of [`Body`] and its CRC-32: a format number, the engine version, the seq and the
//! state hash the log recorded there, the engine state without its settled deals, the deals
//! settled since the previous snapshot this session wrote (`results_from`: how many come
//! before them), and what the backlog must remember (idempotency key fingerprints, reconnect
//! windows). The settled deals are split across the snapshots so that a match's snapshots
//! hold each deal's result once, not the whole list at every deal.
//!
//! Reading is [`newest`]: the snapshots, oldest first, chain their results; the first one that
//! does not decode, is of another format or engine, or leaves a gap in the results ends the
//! chain, and the newest state of the chain must reproduce its recorded hash. The caller also
//! checks that hash against the log's entry at that seq, so a snapshot is only ever a shortcut
//! to a state the log proves. What is ignored is counted (`metrics::snapshot`).

use serde::{Deserialize, Serialize};

use super::Session;
use crate::game::{DealResult, ENGINE_VERSION, Event, Game, HashScheme, RESULTS_KEPT, Results};
use crate::service::backlog::Memory;
use crate::store::Snapshot;

/// Where it was (`service::restored`), so that this path names it still.
pub use crate::service::restored::Restored;

/// The snapshot format written: 2 since the backlog's key fingerprints are XXH3 (its [`Memory`]
/// says how many are SHA-256 ones). Format 1 (every fingerprint SHA-256, no such count) is
/// still read ([`MemoryV1`]); a snapshot of any other format is ignored.
pub const FORMAT: u16 = 2;

/// A snapshot's content; `M` is what the backlog kept, of the current format by default.
#[derive(Serialize, Deserialize)]
struct Body<M = Memory> {
    format: u16,
    engine: String,
    seq: u64,
    /// The state hash the log recorded at `seq` (the game's hash scheme).
    hash: String,
    /// The engine state without its settled deals ([`Game::without_results`]).
    game: Game,
    /// How many settled deals come before `results`.
    results_from: u32,
    results: Vec<DealResult>,
    memory: M,
}

/// What a format-1 snapshot kept of the backlog: [`Memory`] without `sha256_keys`, its
/// fingerprints all SHA-256.
#[derive(Serialize, Deserialize)]
struct MemoryV1 {
    keys: Vec<(u64, u64)>,
    window_open: Vec<bool>,
}

impl From<MemoryV1> for Memory {
    fn from(m: MemoryV1) -> Memory {
        Memory {
            sha256_keys: u32::try_from(m.keys.len()).unwrap_or(u32::MAX),
            keys: m.keys,
            window_open: m.window_open,
        }
    }
}

/// A state read back from the snapshots.
pub struct Resumed {
    pub seq: u64,
    /// The state hash the snapshot recorded (the caller checks it against the log's).
    pub hash: String,
    pub game: Game,
    pub memory: Memory,
}

/// What reading the snapshots of a game gave.
pub struct Chain {
    /// The newest usable state, if any.
    pub newest: Option<Resumed>,
    /// How many settled deals the chain covers (a session writes the results after them).
    pub covered: u32,
}

/// Encodes the snapshot of `game` (after its action `seq`, with state hash `hash`), carrying the
/// results from `results_from` on.
fn encode(game: &Game, hash: &str, results_from: u32, memory: Memory) -> Option<Vec<u8>> {
    // The deals kept in memory must reach back to `results_from` (a session writes a snapshot
    // at every deal's end, so it is the last deal but after a lost snapshot).
    let results = game.results_in(results_from..game.results_settled())?;
    let body = Body {
        format: FORMAT,
        engine: ENGINE_VERSION.to_string(),
        seq: game.seq(),
        hash: hash.to_string(),
        game: game.without_results(),
        results_from,
        results,
        memory,
    };
    let mut bytes = postcard::to_stdvec(&body).ok()?;
    let sum = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    Some(bytes)
}

/// A snapshot's body, if its checksum holds (the state is checked by its hash, the backlog's
/// memory by this only); a format-1 body is read as the current format.
fn decode(bytes: &[u8]) -> Option<Body> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(4)?)?;
    let sum = u32::from_le_bytes(sum.try_into().ok()?);
    if crc32fast::hash(body) != sum {
        return None;
    }
    // The format is the first field, whatever the rest.
    let (format, _) = postcard::take_from_bytes::<u16>(body).ok()?;
    if format != 1 {
        return postcard::from_bytes(body).ok();
    }
    let v1: Body<MemoryV1> = postcard::from_bytes(body).ok()?;
    Some(Body {
        format: FORMAT,
        engine: v1.engine,
        seq: v1.seq,
        hash: v1.hash,
        game: v1.game,
        results_from: v1.results_from,
        results: v1.results,
        memory: v1.memory.into(),
    })
}

/// The newest state the snapshots (oldest first) prove, for a game hashed with `scheme`.
pub fn newest(snapshots: &[Snapshot], scheme: HashScheme) -> Chain {
    newest_keeping(snapshots, scheme, 0..0).0
}

/// [`newest`], and the settled deals of the chain whose indexes (deal number − 1) are in
/// `wanted` (proved with the chain: the newest state's hash covers the digest of every deal).
/// The chain is folded as it is read: one snapshot's deals and `wanted`'s at a time in memory.
pub fn newest_keeping(
    snapshots: &[Snapshot],
    scheme: HashScheme,
    wanted: std::ops::Range<u32>,
) -> (Chain, Vec<DealResult>) {
    let mut results = Results::for_scheme(scheme);
    let mut picked: Vec<DealResult> = Vec::new();
    let mut last: Option<Body> = None;
    for s in snapshots {
        let body = match decode(&s.body) {
            Some(b) if b.format == FORMAT && b.engine == ENGINE_VERSION && b.seq == s.seq => b,
            Some(_) => {
                crate::metrics::snapshot("other_format");
                break;
            }
            None => {
                crate::metrics::snapshot("corrupt");
                break;
            }
        };
        // A snapshot written after a rebuild may repeat deals the chain has (from the
        // newest snapshot that rebuild used): they must be the ones kept, and are skipped.
        let repeated = results.settled().checked_sub(body.results_from);
        let Some(fresh) = repeated.and_then(|n| {
            let same = results.ends_with(body.results.get(..n as usize)?);
            same.then(|| &body.results[n as usize..])
        }) else {
            // An earlier snapshot is missing (lost: a snapshot is not durable), or the deals
            // it repeats are not the chain's.
            crate::metrics::snapshot("gap");
            break;
        };
        for r in fresh {
            if wanted.contains(&results.settled()) {
                picked.push(r.clone());
            }
            results.push(r);
        }
        last = Some(body);
    }
    let chained = results.settled();
    let newest = last.and_then(|body| {
        let game = body.game.with_results(results);
        if game.seq() != body.seq || game.state_hash_with(scheme) != body.hash {
            crate::metrics::snapshot("hash_mismatch");
            return None;
        }
        Some(Resumed {
            seq: body.seq,
            hash: body.hash,
            game,
            memory: body.memory,
        })
    });
    let covered = if newest.is_some() { chained } else { 0 };
    if newest.is_none() {
        picked.clear();
    }
    (Chain { newest, covered }, picked)
}

impl Session {
    /// The snapshot to store after the action just accepted, if it ended a deal: (seq,
    /// bytes). Once per accepted deal end (a second call gives `None`). None either when the
    /// deal ended the match and the session keeps every deal's result: no action follows, a
    /// rebuild of the finished game replays that deal from the previous snapshot, and no
    /// GetState page reads the store for a deal the session keeps (the embedded store would
    /// otherwise write, and for a one-deal game create, a snapshot file nobody reads).
    pub fn take_snapshot(&mut self) -> Option<(u64, Vec<u8>)> {
        if !std::mem::take(&mut self.deal_ended) {
            return None;
        }
        if self.finished() && self.game.results_settled() as usize <= RESULTS_KEPT {
            return None;
        }
        let hash = self
            .game
            .state_hash_from(self.record.hash_scheme, &self.hash_prefix);
        let body = encode(
            &self.game,
            &hash,
            self.snapshot_covered,
            self.backlog.memory(),
        )?;
        self.snapshot_covered = self.game.results_settled();
        Some((self.game.seq(), body))
    }

    /// True when `events` end a deal (a snapshot is due).
    pub(super) fn ends_deal(events: &[Event]) -> bool {
        events.iter().any(|e| matches!(e, Event::DealEnded(_)))
    }
}

impl Session {
    /// Rebuilds a game from its stored record and log, starting from the newest state its
    /// `snapshots` (oldest first) prove when one is usable: at least `keep` entries before the
    /// log's end (the backlog of `keep` actions is then replayed, as full as a full replay's),
    /// its hash the one the log recorded at its seq, resumed on this server's configuration.
    /// Otherwise the whole log is replayed ([`Session::restore`]). Either way every entry
    /// replayed is checked against its recorded state hash. The session keeps `keep` actions.
    pub fn restore_from(
        registry: &crate::variants::Registry,
        record: &crate::store::GameRecord,
        log: &[crate::store::LogEntry],
        snapshots: &[Snapshot],
        keep: usize,
        no_timers: bool,
    ) -> Result<Session, crate::service::status::ApiError> {
        // With the whole log (`from` 0) the answer is a game; the other two are not given.
        match Session::restore_from_tail(registry, record, 0, log, snapshots, keep, no_timers)? {
            Restored::Game(live) => Ok(live),
            Restored::EntriesAfter(_) => {
                Session::replay_whole(registry, record, log, keep, 0, no_timers)
            }
            Restored::WholeLog { covered } => {
                Session::replay_whole(registry, record, log, keep, covered, no_timers)
            }
        }
    }

    /// [`Session::restore_from`] given only the log's entries after `from` (`tail`, entry
    /// `from + 1` first): the log is `from + tail.len()` entries long (entries appended after
    /// the caller read the snapshots are in the tail, so none is lost or applied twice). With
    /// `from` 0 the tail is the whole log and the answer is always a game; otherwise a rebuild
    /// that needs earlier entries says which ([`Restored`]).
    pub fn restore_from_tail(
        registry: &crate::variants::Registry,
        record: &crate::store::GameRecord,
        from: u64,
        tail: &[crate::store::LogEntry],
        snapshots: &[Snapshot],
        keep: usize,
        no_timers: bool,
    ) -> Result<Restored<Session>, crate::service::status::ApiError> {
        let scheme = crate::service::record::Record::decode(&record.body)?.hash_scheme;
        let len = from.saturating_add(tail.len() as u64);
        let before = len.saturating_sub(keep as u64);
        let usable = snapshots.partition_point(|s| s.seq <= before);
        let chain = newest(&snapshots[..usable], scheme);
        if let Some(resumed) = chain.newest {
            let at = resumed.seq;
            if at >= 1 && at - 1 < from {
                return Ok(Restored::EntriesAfter(at - 1));
            }
            // The index in the tail of the snapshot's own entry (its recorded hash).
            let i = at
                .checked_sub(1 + from)
                .and_then(|i| usize::try_from(i).ok());
            let in_log = i
                .and_then(|i| tail.get(i))
                .and_then(|e| crate::service::stored::decode(e).ok())
                .is_some_and(|s| s.hash == resumed.hash);
            match i {
                Some(i) if in_log => {
                    match Session::resume(
                        registry,
                        record,
                        resumed,
                        chain.covered,
                        &tail[i + 1..],
                        keep,
                        no_timers,
                    ) {
                        Ok(live) => {
                            crate::metrics::snapshot("used");
                            return Ok(Restored::Game(live));
                        }
                        Err(e) => {
                            crate::metrics::snapshot("resume_failed");
                            tracing::warn!(game = %record.id, error = %e, "snapshot not used");
                        }
                    }
                }
                _ => crate::metrics::snapshot("not_in_log"),
            }
        }
        if from > 0 {
            return Ok(Restored::WholeLog {
                covered: chain.covered,
            });
        }
        Session::replay_whole(registry, record, tail, keep, chain.covered, no_timers)
            .map(Restored::Game)
    }

    /// The whole `log` replayed ([`Session::restore`]), keeping `keep` actions; the snapshots
    /// already written cover `covered` deals (the next one carries the deals after them).
    pub fn replay_whole(
        registry: &crate::variants::Registry,
        record: &crate::store::GameRecord,
        log: &[crate::store::LogEntry],
        keep: usize,
        covered: u32,
        no_timers: bool,
    ) -> Result<Session, crate::service::status::ApiError> {
        let mut live = Session::restore(registry, record, log, no_timers)?;
        live.keep_actions(keep);
        live.snapshot_covered = covered;
        Ok(live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameConfig;
    use crate::game::testing::PlainHooks;
    use crate::rules::Rules;

    fn game() -> Game {
        let hooks = PlainHooks::new(Rules::CLASSIC);
        let config = GameConfig::new("classic", "test", 1);
        Game::new(config, &hooks, [7; 32], None, 0).unwrap().0
    }

    fn framed(body: Vec<u8>) -> Vec<u8> {
        let mut bytes = body;
        let sum = crc32fast::hash(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes
    }

    /// A snapshot as a server of format 1 wrote it (its `Body` with the `Memory` of then: keys
    /// and windows only) reads back, its fingerprints all taken as SHA-256 ones; a format-2
    /// snapshot keeps its count.
    #[test]
    fn format_1_snapshots_read_with_their_fingerprints_as_sha256() {
        let g = game();
        let keys = vec![(11, 3), (12, 5), (13, 9)];
        let v1 = Body {
            format: 1,
            engine: ENGINE_VERSION.to_string(),
            seq: g.seq(),
            hash: "h".into(),
            game: g.without_results(),
            results_from: 0,
            results: Vec::new(),
            memory: MemoryV1 {
                keys: keys.clone(),
                window_open: vec![true, false, false, false],
            },
        };
        let back = decode(&framed(postcard::to_stdvec(&v1).unwrap())).unwrap();
        assert_eq!(back.format, FORMAT);
        assert_eq!(back.memory.keys, keys);
        assert_eq!(back.memory.sha256_keys, 3);
        assert_eq!(back.memory.window_open, vec![true, false, false, false]);

        let memory = Memory {
            keys,
            window_open: vec![false; 4],
            sha256_keys: 1,
        };
        let bytes = encode(&g, "h", 0, memory.clone()).unwrap();
        assert_eq!(decode(&bytes).unwrap().memory, memory);
    }
}
