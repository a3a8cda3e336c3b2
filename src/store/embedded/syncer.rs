//! The second step of the embedded store's group commit, on the writer thread right after a
//! batch's write: one `fdatasync` covering the batch, then the batch applied to the index and
//! answered, before the writer takes the next batch. Writes queued meanwhile wait in the
//! writer's queue and make the next batch: the longer a sync takes, the more writes the next one
//! covers (group commit), and a write waits for at most the sync in progress and its own.
//!
//! Synchronous on purpose. An earlier pipeline handed each written batch to syncer threads and
//! started an `fdatasync` for it at once, even while another was in flight: more syncs of fewer
//! writes each, and two thread hand-offs per batch. On the bench machine an `fdatasync` costs
//! ≈ 50 µs of CPU whatever it covers, and every hand-off a wake-up, so the pipeline spent more
//! server CPU per play than it saved in waiting (BENCHMARKS.md, "Service per store").
//!
//! A failed sync fails its batch (the outcome is unknown to its writers) and marks the store
//! broken until the writer has cut the journal back to the durable end ([`Done`]); no other
//! batch is written in between.
//!
//! Must not be called from async code (it blocks on I/O); only the writer thread runs it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::disk::DiskFile;
use super::journal::Rec;
use super::meters::Meters;
use super::ops::{NewScript, Op, Phases, Plan};
use super::{IoStep, Shared, store_error};
use crate::store::{Appended, Created};

/// A batch the writer has written, to be made durable and answered.
pub(super) struct Written {
    /// The batch's number (1, 2, …, in write order).
    pub(super) no: u64,
    pub(super) ops: Vec<Op>,
    pub(super) plans: Vec<Plan>,
    pub(super) new_scripts: Vec<NewScript>,
    /// The journal its frames went to (`None`: the batch wrote nothing).
    pub(super) journal: Option<Arc<DiskFile>>,
    /// The end of the journal's data after this batch.
    pub(super) end: u64,
}

/// How far the commits have got: the last batch finished (answered or failed) and the end of
/// the durable journal data.
#[derive(Clone, Copy, Debug)]
pub(super) struct Done {
    pub(super) batches: u64,
    pub(super) durable: u64,
}

/// How far the commits have got, readable off the writer thread (the compaction thread copies
/// the journal up to the durable end).
pub(super) struct Progress(Mutex<Done>);

impl Progress {
    fn lock(&self) -> std::sync::MutexGuard<'_, Done> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The last batch finished and the durable end after it.
    pub(super) fn done(&self) -> Option<Done> {
        Some(*self.lock())
    }

    /// A compaction swapped the journal for one whose data ends at `end`, with no batch in
    /// flight: from now on the durable end is that file's (a repair before the next sync cuts
    /// the new journal back to it, not to an offset in the old one).
    pub(super) fn swapped(&self, end: u64) {
        self.lock().durable = end;
    }
}

/// The writer's syncing step: makes each written batch durable and answers it.
pub(super) struct Syncer {
    progress: Arc<Progress>,
    meters: Meters,
}

impl Syncer {
    /// The journal's data is durable up to `durable`.
    pub(super) fn new(durable: u64) -> Syncer {
        Syncer {
            progress: Arc::new(Progress(Mutex::new(Done {
                batches: 0,
                durable,
            }))),
            meters: Meters::register(),
        }
    }

    /// The number the next batch gets.
    pub(super) fn next_no(&self) -> u64 {
        self.progress.lock().batches + 1
    }

    /// How far the commits have got, shared (the compaction thread reads the durable end).
    pub(super) fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// The last batch finished.
    pub(super) fn finished(&self) -> u64 {
        self.progress.lock().batches
    }

    /// The durable end: no batch is ever in flight between two calls of the writer.
    pub(super) fn durable(&self) -> u64 {
        self.progress.lock().durable
    }

    /// Fsyncs a written batch, then applies and answers it (or fails it and marks the store
    /// broken).
    pub(super) fn commit(&mut self, shared: &Shared, batch: Written) {
        let mut phase = Phases::start();
        let outcome = if shared.broken.load(Ordering::Acquire) {
            Err("the store is being repaired after a failed write".to_string())
        } else if let Some(journal) = &batch.journal {
            let synced = shared
                .fault(IoStep::Sync)
                .and_then(|()| journal.sync_data())
                .and_then(|()| sync_dir_if_renamed(shared))
                .map_err(|e| format!("{}: {e}", shared.label));
            phase.end(&self.meters.sync);
            synced
        } else {
            Ok(())
        };
        let done = *self.progress.lock();
        let done = finish(shared, outcome, batch, done, &mut phase, &self.meters);
        *self.progress.lock() = done;
    }
}

/// After a compaction's rename, fsyncs the data directory (once): a batch written to the renamed
/// journal is answered only once the rename is durable (else a power loss could bring the old
/// journal back, without the batch).
fn sync_dir_if_renamed(shared: &Shared) -> std::io::Result<()> {
    if !shared.dir_unsynced.load(Ordering::Acquire) {
        return Ok(());
    }
    shared.disk.sync_dir(&shared.dir)?;
    shared.dir_unsynced.store(false, Ordering::Release);
    Ok(())
}

/// Finishes a batch after its sync: applies and answers it if the sync succeeded, else fails it
/// and marks the store broken. Returns how far the commits have got.
fn finish(
    shared: &Shared,
    outcome: Result<(), String>,
    mut batch: Written,
    mut done: Done,
    phase: &mut Phases,
    meters: &Meters,
) -> Done {
    done.batches = batch.no;
    match outcome {
        Ok(()) => {
            done.durable = batch.end;
            apply(shared, &mut batch);
            phase.end(&meters.apply);
            let ops = batch.ops.len();
            shared.commits.fetch_add(1, Ordering::Relaxed);
            shared
                .committed_ops
                .fetch_add(ops as u64, Ordering::Relaxed);
            meters.ops.record(ops as f64);
            for (op, plan) in batch.ops.into_iter().zip(batch.plans) {
                reply(shared, op, plan);
            }
            phase.end(&meters.reply);
        }
        Err(e) => {
            shared.broken.store(true, Ordering::Release);
            tracing::warn!(store = "embedded", ops = batch.ops.len(), error = %e,
                "commit failed; every write of the batch gets an error");
            let message = format!("commit failed (outcome unknown): {e}");
            batch.ops.into_iter().for_each(|op| op.fail(&message));
        }
    }
    done
}

/// Applies a synced batch's frames to the index, in write order.
fn apply(shared: &Shared, batch: &mut Written) {
    let mut st = match shared.state.write() {
        Ok(st) => st,
        Err(_) => {
            batch
                .ops
                .drain(..)
                .for_each(|op| op.fail("internal lock poisoned"));
            batch.plans.clear();
            return;
        }
    };
    for new in &batch.new_scripts {
        if let Some(Op::Create { record, .. }) = batch.ops.get(new.op) {
            if let Some(s) = &record.script {
                let rec = Rec::Script {
                    hash: &s.hash,
                    text: &s.text,
                };
                if let Err(m) = st.index.apply(new.span, &rec) {
                    tracing::error!(store = "embedded", error = %m, "index out of step");
                }
            }
        }
    }
    for (op, plan) in batch.ops.iter().zip(&batch.plans) {
        let Plan::Written(span, at) = plan else {
            continue;
        };
        if let Some(rec) = written(op, *at) {
            if let Err(m) = st.index.apply(*span, &rec) {
                tracing::error!(store = "embedded", error = %m, "index out of step");
            }
        }
    }
}

/// The frame an operation wrote, for the index.
fn written<'a>(op: &'a Op, at: u64) -> Option<Rec<'a>> {
    match op {
        Op::Create { record, .. } => Some(Rec::Create {
            id: &record.id,
            platform: record.platform.as_deref(),
            request_id: record.request_id.as_deref(),
            body: &record.body,
            script: record.script.as_ref().map(|s| s.hash.as_str()),
        }),
        Op::Append { id, entry, .. } => Some(Rec::Append {
            id,
            seq: entry.seq,
            body: &entry.body,
        }),
        Op::Finish { id, .. } => Some(Rec::Finish { id, at }),
        Op::Sync { .. } | Op::Compact { .. } => None,
    }
}

/// Answers one committed operation.
fn reply(shared: &Shared, op: Op, plan: Plan) {
    match (op, plan) {
        (Op::Create { reply, .. }, Plan::Created(r)) => {
            let _ = reply.send(r.map_err(|m| store_error("create", m)));
        }
        (Op::Create { reply, .. }, Plan::Written(..)) => {
            let _ = reply.send(Ok(Created::New));
        }
        (Op::Append { reply, .. }, Plan::Appended(r)) => {
            let _ = reply.send(r.map_err(|m| store_error("append", m)));
        }
        (Op::Append { id, entry, reply }, Plan::Written(..)) => {
            shared.notify(&id, entry.seq);
            let _ = reply.send(Ok(Appended::Ok));
        }
        (Op::Finish { id, reply }, _) => {
            shared.drop_watchers(&id);
            let _ = reply.send(Ok(()));
        }
        (Op::Sync { reply, .. } | Op::Compact { reply }, _) => {
            let _ = reply.send(Ok(()));
        }
        (op, _) => op.fail("internal error: outcome mismatch"),
    }
}
