//! The second stage of the embedded store's pipelined group commit: the syncer thread.
//!
//! The writer thread decides a batch and writes its frames (`pwrite`), then hands the batch here
//! and goes on with the next one. The syncer takes every batch handed over since its last
//! `fdatasync`, syncs once for all of them, and only then applies them to the index (in write
//! order) and answers their waiters. So while one `fdatasync` is in flight the next batch is
//! decided and written, and a write waits for at most the sync in progress and its own: the
//! scheme of pipelined write-ahead logs (RocksDB's `enable_pipelined_write`, okaywal's
//! "next commit while the current one syncs").
//!
//! Nothing is answered or visible to readers before the fsync that covers it. A failed fsync
//! marks the store broken and fails every batch handed over until the writer has cut the journal
//! back to the durable end this stage reports ([`Progress`]).
//!
//! Must not be called from async code (it blocks on I/O); only [`super::EmbeddedStore`] starts it.

use std::fs::File;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::journal::Rec;
use super::ops::{NewScript, Op, Phases, Plan};
use super::{IoStep, Shared, join_thread, store_error};
use crate::store::{Appended, Created};

/// Batches written but not yet synced before the writer waits (back-pressure).
pub(super) const IN_FLIGHT: usize = 64;

/// A batch the writer has written, for the syncer to make durable and answer.
pub(super) struct Written {
    /// The batch's number (1, 2, …, in write order).
    pub(super) no: u64,
    pub(super) ops: Vec<Op>,
    pub(super) plans: Vec<Plan>,
    pub(super) new_scripts: Vec<NewScript>,
    /// The journal its frames went to (`None`: the batch wrote nothing).
    pub(super) journal: Option<Arc<File>>,
    /// The end of the journal's data after this batch.
    pub(super) end: u64,
    /// When its write ended (the `in_flight` phase runs from here to its sync's start).
    pub(super) at: Instant,
}

/// How far the syncer has got: the last batch it finished (answered or failed) and the end of
/// the durable journal data.
#[derive(Clone, Copy, Debug)]
pub(super) struct Done {
    pub(super) batches: u64,
    pub(super) durable: u64,
}

/// [`Done`], shared by the two threads; the writer waits on it.
pub(super) struct Progress {
    done: Mutex<Done>,
    changed: Condvar,
}

impl Progress {
    pub(super) fn new(durable: u64) -> Progress {
        Progress {
            done: Mutex::new(Done {
                batches: 0,
                durable,
            }),
            changed: Condvar::new(),
        }
    }

    /// The last batch finished.
    pub(super) fn batches(&self) -> u64 {
        self.done.lock().map_or(0, |d| d.batches)
    }

    /// The last batch finished and the durable end after it (read by the compaction thread).
    pub(super) fn done(&self) -> Option<Done> {
        self.done.lock().ok().map(|d| *d)
    }

    fn set(&self, done: Done) {
        match self.done.lock() {
            Ok(mut d) => *d = done,
            Err(mut poisoned) => **poisoned.get_mut() = done,
        }
        self.changed.notify_all();
    }

    /// Waits until batch `no` is finished; `None` if `alive` says the syncer stopped first.
    fn wait_for(&self, no: u64, alive: impl Fn() -> bool) -> Option<Done> {
        let mut d = self.done.lock().ok()?;
        while d.batches < no {
            if !alive() {
                return None;
            }
            // A bounded wait so that a stopped syncer is noticed.
            d = self
                .changed
                .wait_timeout(d, Duration::from_millis(100))
                .ok()?
                .0;
        }
        Some(*d)
    }
}

/// The writer's end of the pipeline: hands batches over and waits for them.
pub(super) struct Pipe {
    tx: Option<SyncSender<Written>>,
    progress: Arc<Progress>,
    syncer: Option<JoinHandle<()>>,
    /// Batches handed over so far.
    sent: u64,
}

impl Pipe {
    /// Starts the syncer thread; the journal's data is durable up to `durable`.
    pub(super) fn start(shared: Arc<Shared>, durable: u64) -> std::io::Result<Pipe> {
        let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let progress = Arc::new(Progress::new(durable));
        let p = Arc::clone(&progress);
        let syncer = std::thread::Builder::new()
            .name("shuangkou-store-syncer".into())
            .spawn(move || run_syncer(&shared, &p, rx))?;
        Ok(Pipe {
            tx: Some(tx),
            progress,
            syncer: Some(syncer),
            sent: 0,
        })
    }

    /// The number the next batch handed over gets.
    pub(super) fn next_no(&self) -> u64 {
        self.sent + 1
    }

    /// How far the syncer has got, shared (the compaction thread reads the durable end).
    pub(super) fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// The last batch the syncer finished.
    pub(super) fn finished(&self) -> u64 {
        self.progress.batches()
    }

    /// Hands a written batch over (waits while [`IN_FLIGHT`] batches are); if the syncer has
    /// stopped, fails its operations.
    pub(super) fn send(&mut self, batch: Written) {
        let Some(tx) = &self.tx else {
            batch
                .ops
                .into_iter()
                .for_each(|op| op.fail("store syncer stopped"));
            return;
        };
        self.sent = batch.no;
        if let Err(e) = tx.send(batch) {
            e.0.ops
                .into_iter()
                .for_each(|op| op.fail("store syncer stopped (outcome unknown)"));
        }
    }

    /// Waits until every batch handed over is finished; returns the durable end (`None`: the
    /// syncer stopped).
    pub(super) fn wait_idle(&self) -> Option<u64> {
        let syncer = self.syncer.as_ref()?;
        self.progress
            .wait_for(self.sent, || !syncer.is_finished())
            .map(|d| d.durable)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // Closing the channel lets the syncer finish what was handed over and exit.
        self.tx.take();
        join_thread(self.syncer.take(), "syncer");
    }
}

/// The syncer thread: one `fdatasync` per group of written batches, then apply and answer.
fn run_syncer(shared: &Shared, progress: &Progress, rx: Receiver<Written>) {
    let mut durable = progress.done.lock().map_or(0, |d| d.durable);
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        group.extend(rx.try_iter().take(IN_FLIGHT));
        let last = group.last().map_or(0, |b| b.no);
        let journal = group.iter().rev().find_map(|b| b.journal.clone());
        let mut phase = Phases::start();
        for b in &group {
            crate::metrics::store_commit_phase("in_flight", (phase.0 - b.at).as_secs_f64());
        }
        let synced = if shared.broken.load(Ordering::Acquire) {
            Err("the store is being repaired after a failed write".to_string())
        } else if let Some(journal) = &journal {
            shared
                .fault(IoStep::Sync)
                .and_then(|()| journal.sync_data())
                .map_err(|e| format!("{}: {e}", shared.label))
        } else {
            Ok(())
        };
        if journal.is_some() {
            phase.end("sync");
        }
        match synced {
            Ok(()) => {
                durable = group.iter().map(|b| b.end).max().unwrap_or(durable);
                apply(shared, &mut group);
                phase.end("apply");
                let ops: usize = group.iter().map(|b| b.ops.len()).sum();
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .committed_ops
                    .fetch_add(ops as u64, Ordering::Relaxed);
                crate::metrics::store_commit_ops(ops);
                for b in group {
                    for (op, plan) in b.ops.into_iter().zip(b.plans) {
                        reply(shared, op, plan);
                    }
                }
                phase.end("reply");
            }
            Err(e) => {
                shared.broken.store(true, Ordering::Release);
                let ops: usize = group.iter().map(|b| b.ops.len()).sum();
                tracing::warn!(store = "embedded", ops, error = %e,
                    "commit failed; every write of the batch gets an error");
                let message = format!("commit failed (outcome unknown): {e}");
                for b in group {
                    b.ops.into_iter().for_each(|op| op.fail(&message));
                }
            }
        }
        progress.set(Done {
            batches: last,
            durable,
        });
    }
}

/// Applies a synced group's frames to the index, in write order.
fn apply(shared: &Shared, group: &mut [Written]) {
    let mut st = match shared.state.write() {
        Ok(st) => st,
        Err(_) => {
            for b in group.iter_mut() {
                b.ops
                    .drain(..)
                    .for_each(|op| op.fail("internal lock poisoned"));
                b.plans.clear();
            }
            return;
        }
    };
    for b in group.iter() {
        for new in &b.new_scripts {
            if let Some(Op::Create { record, .. }) = b.ops.get(new.op) {
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
        for (op, plan) in b.ops.iter().zip(&b.plans) {
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
