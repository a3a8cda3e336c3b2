//! The embedded store's writer thread, the group commit. Takes the queued writes, decides each
//! against the index and the batch's earlier operations, writes the batch's frames with one
//! `pwrite`, then has the batch fsynced, applied to the index and answered
//! ([`super::syncer`]) before it takes the next. After a failed write or fsync, it cuts the
//! journal back to its durable end before anything else.
//!
//! Must not be called from async code (it blocks on I/O); only [`super::EmbeddedStore`] starts it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::disk::DiskFile;
use super::index::{Game, Index, RequestKey, request_key};
use super::journal::{self, Rec};
use super::meters::Meters;
use super::ops::{NewScript, Op, Phases, Plan, Queued};
use super::positions::PREALLOCATE;
pub(super) use super::positions::Writer;
use super::retention::Schedule;
use super::syncer::{Syncer, Written};
use super::{IoStep, MAX_BATCH, Shared, compact};
use crate::store::{Appended, Created};

/// What the operations of the batch being decided did before the one being decided, each fact
/// with the number of the batch that wrote it: an operation is decided against the index and
/// these. Facts of finished batches are in the index (or failed) and pruned.
#[derive(Default)]
struct Pending {
    /// A game's log length after the written batches (0: created).
    lens: HashMap<Box<str>, (u64, u64)>,
    finished: HashMap<Box<str>, u64>,
    requests: HashMap<RequestKey, (u64, Box<str>)>,
    scripts: HashMap<Box<str>, u64>,
}

impl Pending {
    /// Forgets the facts of batches up to `finished`.
    fn prune(&mut self, finished: u64) {
        self.lens.retain(|_, (no, _)| *no > finished);
        self.finished.retain(|_, no| *no > finished);
        self.requests.retain(|_, (no, _)| *no > finished);
        self.scripts.retain(|_, no| *no > finished);
    }

    fn clear(&mut self) {
        *self = Pending::default();
    }
}

/// Decides every operation of batch number `no` against the index and the batch's earlier
/// operations (recorded in `pending`), encoding the frames to write into `buf` (whose first byte
/// goes at `base`): a create pinning a script not yet in the table writes the script's frame
/// first.
fn plan(
    index: &Index,
    pending: &mut Pending,
    no: u64,
    batch: &[Op],
    now: u64,
    base: u64,
    buf: &mut Vec<u8>,
) -> (Vec<Plan>, Vec<NewScript>) {
    let mut new_scripts: Vec<NewScript> = Vec::new();
    let mut plans = Vec::with_capacity(batch.len());
    for (i, op) in batch.iter().enumerate() {
        let plan = match op {
            Op::Create { record, .. } => {
                let platform = record.platform.as_deref();
                let key = record
                    .request_id
                    .as_deref()
                    .map(|r| request_key(platform, r));
                let existing = key.as_ref().and_then(|key| {
                    pending
                        .requests
                        .get(key)
                        .map(|(_, id)| id.to_string())
                        .or_else(|| index.requests.get(key).map(|id| id.to_string()))
                });
                let id = record.id.as_str();
                if let Some(existing) = existing {
                    Plan::Created(Ok(Created::Existing(existing)))
                } else if pending.lens.contains_key(id) || index.games.contains_key(id) {
                    Plan::Created(Err(format!("game {id} exists")))
                } else {
                    pending.lens.insert(Box::from(id), (no, 0));
                    if let Some(key) = key {
                        pending.requests.insert(key, (no, Box::from(id)));
                    }
                    let script = record.script.as_ref();
                    if let Some(s) = script.filter(|s| {
                        !index.scripts.contains_key(s.hash.as_str())
                            && !pending.scripts.contains_key(s.hash.as_str())
                    }) {
                        pending.scripts.insert(Box::from(s.hash.as_str()), no);
                        let rec = Rec::Script {
                            hash: &s.hash,
                            text: &s.text,
                        };
                        let span = journal::encode(&rec, base, buf);
                        new_scripts.push(NewScript { span, op: i });
                    }
                    let rec = Rec::Create {
                        id,
                        platform,
                        request_id: record.request_id.as_deref(),
                        body: &record.body,
                        script: script.map(|s| s.hash.as_str()),
                    };
                    Plan::Written(journal::encode(&rec, base, buf), 0)
                }
            }
            Op::Append { id, entry, .. } => {
                let id = id.as_str();
                let stored = index.games.get(id);
                let current = pending
                    .lens
                    .get(id)
                    .map(|(_, len)| *len)
                    .or_else(|| stored.map(Game::log_len));
                let done = pending.finished.contains_key(id)
                    || stored.is_some_and(|g| g.finished.is_some());
                match current {
                    None => Plan::Appended(Err(format!("no game {id}"))),
                    Some(current) if entry.seq != current + 1 => {
                        Plan::Appended(Ok(Appended::Conflict { current }))
                    }
                    // A finished game's log is closed (the service never appends to one).
                    Some(_) if done => Plan::Appended(Err(format!("game {id} is finished"))),
                    Some(_) => {
                        pending.lens.insert(Box::from(id), (no, entry.seq));
                        let rec = Rec::Append {
                            id,
                            seq: entry.seq,
                            body: &entry.body,
                        };
                        Plan::Written(journal::encode(&rec, base, buf), 0)
                    }
                }
            }
            Op::Finish { id, .. } => {
                let id = id.as_str();
                let stored = index.games.get(id);
                let exists = pending.lens.contains_key(id) || stored.is_some();
                let done = pending.finished.contains_key(id)
                    || stored.is_some_and(|g| g.finished.is_some());
                if exists && !done {
                    pending.finished.insert(Box::from(id), no);
                    let rec = Rec::Finish { id, at: now };
                    Plan::Written(journal::encode(&rec, base, buf), now)
                } else {
                    Plan::Done
                }
            }
            Op::Sync { .. } | Op::Compact { .. } => Plan::Done,
        };
        plans.push(plan);
    }
    (plans, new_scripts)
}

/// The writer thread: decides, writes, syncs and answers batches of queued writes, one after
/// the other ([`super::syncer`] for the sync and the replies).
pub(super) fn run_writer(
    shared: Arc<Shared>,
    mut w: Writer,
    mut queue: mpsc::Receiver<Queued>,
    mut syncer: Syncer,
    wake: mpsc::WeakSender<Queued>,
) {
    let mut batch: Vec<Op> = Vec::with_capacity(MAX_BATCH);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut schedule = Schedule::new();
    let mut pending = Pending::default();
    let mut compactions = compact::Compactions::new(wake, Arc::clone(syncer.progress()));
    let meters = Meters::register();
    let take = |q: Queued, batch: &mut Vec<Op>| {
        meters.queued.record(q.at.elapsed().as_secs_f64());
        batch.push(q.op);
    };
    while let Some(first) = queue.blocking_recv() {
        take(first, &mut batch);
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(q) => take(q, &mut batch),
                Err(_) => break,
            }
        }
        let is_compact = |op: &Op| matches!(op, Op::Compact { .. });
        let mut forced = Vec::new();
        if batch.iter().any(is_compact) {
            let (c, rest): (Vec<Op>, Vec<Op>) = batch.drain(..).partition(is_compact);
            forced = c
                .into_iter()
                .filter_map(|op| match op {
                    Op::Compact { reply } => Some(reply),
                    _ => None,
                })
                .collect();
            batch = rest;
        }
        let mut commit = Commit {
            shared: &shared,
            w: &mut w,
            syncer: &mut syncer,
            pending: &mut pending,
            meters: &meters,
        };
        commit.batch(std::mem::take(&mut batch), &mut buf);
        // A forced compaction starts from a copy of the index taken once every write queued
        // before it is committed.
        compactions.step(&shared, &mut w, &mut schedule, forced, || {
            Some(syncer.durable())
        });
    }
    compactions.stop();
}

/// Makes the journal at least `need` bytes long, zeros written and fsynced past its end.
fn preallocate(journal: &DiskFile, w: &mut Writer, need: u64) -> std::io::Result<()> {
    if need <= w.alloc_end {
        return Ok(());
    }
    let to = need + PREALLOCATE;
    journal.write_zeros_at(w.alloc_end, to - w.alloc_end)?;
    journal.sync_data()?;
    w.alloc_end = to;
    Ok(())
}

/// The writer's state for one batch: the files' positions, the syncing step, the facts decided.
struct Commit<'a> {
    shared: &'a Shared,
    w: &'a mut Writer,
    syncer: &'a mut Syncer,
    pending: &'a mut Pending,
    meters: &'a Meters,
}

impl Commit<'_> {
    /// Cuts the journal back to its durable end after a failed commit (before the next batch).
    fn repair(&mut self) -> Result<(), String> {
        let shared = self.shared;
        let durable = self.syncer.durable();
        self.pending.clear();
        self.w.end = durable;
        let journal = Arc::clone(&shared.state("repair").map_err(|e| e.message)?.journal);
        shared
            .fault(IoStep::Sync)
            .and_then(|()| journal.set_len(durable))
            .and_then(|()| journal.sync_data())
            .map_err(|e| {
                format!(
                    "{}: cannot truncate after a failed write: {e}",
                    shared.label
                )
            })?;
        self.w.alloc_end = durable;
        shared.broken.store(false, Ordering::Release);
        tracing::info!(store = "embedded", path = %shared.label, "journal repaired after a failed write");
        Ok(())
    }

    /// Decides and writes one batch, then syncs and answers it.
    fn batch(&mut self, mut ops: Vec<Op>, buf: &mut Vec<u8>) {
        let shared = self.shared;
        if shared.broken.load(Ordering::Acquire) {
            if let Err(m) = self.repair() {
                tracing::warn!(store = "embedded", error = %m, "store still unavailable");
                let message = format!("store unavailable: {m}");
                ops.drain(..).for_each(|op| op.fail(&message));
                return;
            }
        }
        self.pending.prune(self.syncer.finished());
        buf.clear();
        let no = self.syncer.next_no();
        let mut phase = Phases::start();
        let ((plans, new_scripts), journal) = match shared.state("commit") {
            Ok(st) => (
                plan(
                    &st.index,
                    self.pending,
                    no,
                    &ops,
                    shared.now(),
                    self.w.end,
                    buf,
                ),
                Arc::clone(&st.journal),
            ),
            Err(e) => {
                ops.drain(..).for_each(|op| op.fail(&e.message));
                return;
            }
        };
        phase.end(&self.meters.plan);
        let mut wrote = None;
        if !buf.is_empty() {
            let w = &mut *self.w;
            let written = shared
                .fault(IoStep::Write)
                .and_then(|()| preallocate(&journal, w, w.end + buf.len() as u64))
                .and_then(|()| journal.write_all_at(buf, w.end));
            if let Err(e) = written {
                shared.broken.store(true, Ordering::Release);
                tracing::warn!(store = "embedded", ops = ops.len(), error = %e,
                    "commit failed; every write of the batch gets an error");
                let message = format!("commit failed (outcome unknown): {}: {e}", shared.label);
                ops.drain(..).for_each(|op| op.fail(&message));
                // Try at once, so the next batch need not.
                if let Err(m) = self.repair() {
                    tracing::warn!(store = "embedded", error = %m, "repair after a failed write failed");
                }
                return;
            }
            phase.end(&self.meters.write);
            w.end += buf.len() as u64;
            wrote = Some(journal);
        }
        let batch = Written {
            no,
            ops,
            plans,
            new_scripts,
            journal: wrote,
            end: self.w.end,
        };
        self.syncer.commit(shared, batch);
    }
}
