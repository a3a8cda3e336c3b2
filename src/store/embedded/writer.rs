//! The embedded store's writer thread: group commit. Takes the queued writes, decides each
//! against the index and the batch's earlier operations, writes the batch's frames with one
//! `pwrite` and one `fdatasync`, then updates the index and answers; after a failed write, cuts
//! the journal back to its durable end before anything else.
//!
//! Must not be called from async code (it blocks on I/O); only [`super::EmbeddedStore`] starts it.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::index::{Game, Index, request_key};
use super::journal::{self, Rec, Span};
pub(super) use super::positions::Writer;
use super::retention::Schedule;
use super::{IoStep, MAX_BATCH, Shared, compact, store_error};
use crate::store::{Appended, Created, GameRecord, LogEntry, StoreError};

/// Bytes of zeros the journal is extended by, and fsynced, ahead of the commits: a commit then
/// overwrites allocated blocks, and its `fdatasync` flushes data without a file-size change
/// (measured on this machine's disk: 4–6× shorter at the median and p90 than appending).
pub(super) const PREALLOCATE: u64 = 4 << 20;

pub(super) type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// An operation in the writer's queue, with the time it was submitted (the `queued` phase).
pub(super) struct Queued {
    pub(super) op: Op,
    pub(super) at: Instant,
}

/// A write for the writer thread.
pub(super) enum Op {
    Create {
        record: GameRecord,
        reply: Reply<Created>,
    },
    Append {
        id: String,
        entry: LogEntry,
        reply: Reply<Appended>,
    },
    Finish {
        id: String,
        reply: Reply<()>,
    },
    /// Compacts the journal after the batch (if any finished game is in it).
    Compact {
        reply: Reply<()>,
    },
    /// Answered after everything queued before it is committed.
    Sync {
        op: &'static str,
        reply: Reply<()>,
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Create { .. } => "create",
            Op::Append { .. } => "append",
            Op::Finish { .. } => "finish",
            Op::Compact { .. } => "compact",
            Op::Sync { op, .. } => op,
        }
    }

    fn fail(self, message: &str) {
        let e = store_error(self.name(), message);
        // A dropped receiver means the caller went away; nothing to tell.
        match self {
            Op::Create { reply, .. } => drop(reply.send(Err(e))),
            Op::Append { reply, .. } => drop(reply.send(Err(e))),
            Op::Finish { reply, .. } => drop(reply.send(Err(e))),
            Op::Compact { reply } | Op::Sync { reply, .. } => drop(reply.send(Err(e))),
        }
    }
}

/// What one operation of a batch does, decided before the write.
enum Plan {
    Created(Result<Created, String>),
    Appended(Result<Appended, String>),
    /// A frame was written for the op (create, append or finish) at this span; `at` is a
    /// finish's time.
    Written(Span, u64),
    Done,
}

/// A script frame a batch writes (before the create of op `op`, the first to pin it).
struct NewScript {
    span: Span,
    op: usize,
}

/// Decides every operation of a batch against the index and the batch's earlier operations,
/// encoding the frames to write into `buf` (whose first byte goes at `base`): a create pinning a
/// script not yet in the table writes the script's frame first.
fn plan(
    index: &Index,
    batch: &[Op],
    now: u64,
    base: u64,
    buf: &mut Vec<u8>,
) -> (Vec<Plan>, Vec<NewScript>) {
    let mut lens: HashMap<&str, u64> = HashMap::new();
    let mut new_scripts: Vec<NewScript> = Vec::new();
    let mut scripts: HashSet<&str> = HashSet::new();
    let mut requests: HashMap<(Option<&str>, &str), &str> = HashMap::new();
    let mut finished: HashSet<&str> = HashSet::new();
    let mut plans = Vec::with_capacity(batch.len());
    for (i, op) in batch.iter().enumerate() {
        let plan = match op {
            Op::Create { record, .. } => {
                let platform = record.platform.as_deref();
                let existing = record.request_id.as_deref().and_then(|rid| {
                    requests
                        .get(&(platform, rid))
                        .map(|id| id.to_string())
                        .or_else(|| {
                            index
                                .requests
                                .get(&request_key(platform, rid))
                                .map(|id| id.to_string())
                        })
                });
                let id = record.id.as_str();
                if let Some(existing) = existing {
                    Plan::Created(Ok(Created::Existing(existing)))
                } else if lens.contains_key(id) || index.games.contains_key(id) {
                    Plan::Created(Err(format!("game {id} exists")))
                } else {
                    lens.insert(id, 0);
                    if let Some(rid) = record.request_id.as_deref() {
                        requests.insert((platform, rid), id);
                    }
                    let script = record.script.as_ref();
                    if let Some(s) = script.filter(|s| {
                        !index.scripts.contains_key(s.hash.as_str())
                            && !scripts.contains(s.hash.as_str())
                    }) {
                        scripts.insert(&s.hash);
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
                let current = lens.get(id).copied().or_else(|| stored.map(Game::log_len));
                let done = finished.contains(id) || stored.is_some_and(|g| g.finished.is_some());
                match current {
                    None => Plan::Appended(Err(format!("no game {id}"))),
                    Some(current) if entry.seq != current + 1 => {
                        Plan::Appended(Ok(Appended::Conflict { current }))
                    }
                    // A finished game's log is closed (the service never appends to one).
                    Some(_) if done => Plan::Appended(Err(format!("game {id} is finished"))),
                    Some(_) => {
                        lens.insert(id, entry.seq);
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
                let exists = lens.contains_key(id) || stored.is_some();
                let done = finished.contains(id) || stored.is_some_and(|g| g.finished.is_some());
                if exists && !done {
                    finished.insert(id);
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

/// The writer thread: batches queued writes into one durable commit each.
pub(super) fn run_writer(shared: Arc<Shared>, mut w: Writer, mut queue: mpsc::Receiver<Queued>) {
    let mut batch: Vec<Op> = Vec::with_capacity(MAX_BATCH);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut schedule = Schedule::new();
    let take = |q: Queued, batch: &mut Vec<Op>| {
        crate::metrics::store_commit_phase("queued", q.at.elapsed().as_secs_f64());
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
        let mut compacts = Vec::new();
        if batch.iter().any(is_compact) {
            let (c, rest): (Vec<Op>, Vec<Op>) = batch.drain(..).partition(is_compact);
            compacts = c;
            batch = rest;
        }
        commit_batch(&shared, &mut w, &mut batch, &mut buf);
        compact::maybe(&shared, &mut w, &mut schedule, !compacts.is_empty());
        for op in compacts {
            if let Op::Compact { reply } = op {
                let _ = reply.send(Ok(()));
            }
        }
    }
}

/// Makes the journal at least `need` bytes long, zeros written and fsynced past its end.
fn preallocate(journal: &std::fs::File, w: &mut Writer, need: u64) -> std::io::Result<()> {
    if need <= w.alloc_end {
        return Ok(());
    }
    let to = need + PREALLOCATE;
    let zeros = vec![0u8; 1 << 20];
    let mut at = w.alloc_end;
    while at < to {
        let n = (to - at).min(zeros.len() as u64) as usize;
        journal.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    journal.sync_data()?;
    w.alloc_end = to;
    Ok(())
}

/// Cuts the journal back to its durable end after a failed commit.
fn repair(shared: &Shared, w: &mut Writer) -> Result<(), String> {
    let journal = Arc::clone(&shared.state("repair").map_err(|e| e.message)?.journal);
    shared
        .fault(IoStep::Sync)
        .and_then(|()| journal.set_len(w.end))
        .and_then(|()| journal.sync_data())
        .map_err(|e| {
            format!(
                "{}: cannot truncate after a failed write: {e}",
                shared.label
            )
        })?;
    w.alloc_end = w.end;
    shared.broken.store(false, Ordering::Release);
    tracing::info!(store = "embedded", path = %shared.label, "journal repaired after a failed write");
    Ok(())
}

fn commit_batch(shared: &Shared, w: &mut Writer, batch: &mut Vec<Op>, buf: &mut Vec<u8>) {
    if shared.broken.load(Ordering::Acquire) {
        if let Err(m) = repair(shared, w) {
            tracing::warn!(store = "embedded", error = %m, "store still unavailable");
            let message = format!("store unavailable: {m}");
            batch.drain(..).for_each(|op| op.fail(&message));
            return;
        }
    }
    buf.clear();
    let mut phase = Phases::start();
    let ((plans, new_scripts), journal) = match shared.state("commit") {
        Ok(st) => (
            plan(&st.index, batch, shared.now(), w.end, buf),
            Arc::clone(&st.journal),
        ),
        Err(e) => {
            batch.drain(..).for_each(|op| op.fail(&e.message));
            return;
        }
    };
    phase.end("plan");
    if !buf.is_empty() {
        let wrote = shared
            .fault(IoStep::Write)
            .and_then(|()| preallocate(&journal, w, w.end + buf.len() as u64))
            .and_then(|()| journal.write_all_at(buf, w.end))
            .map(|()| phase.end("write"))
            .and_then(|()| shared.fault(IoStep::Sync))
            .and_then(|()| journal.sync_data())
            .map(|()| phase.end("sync"));
        if let Err(e) = wrote {
            shared.broken.store(true, Ordering::Release);
            tracing::warn!(store = "embedded", ops = batch.len(), error = %e,
                "commit failed; every write of the batch gets an error");
            let message = format!("commit failed (outcome unknown): {}: {e}", shared.label);
            batch.drain(..).for_each(|op| op.fail(&message));
            // Try at once, so the next batch need not.
            if let Err(m) = repair(shared, w) {
                tracing::warn!(store = "embedded", error = %m, "repair after a failed write failed");
            }
            return;
        }
        w.end += buf.len() as u64;
        match shared.state.write() {
            Ok(mut st) => {
                for new in &new_scripts {
                    if let Some(Op::Create { record, .. }) = batch.get(new.op) {
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
                for (op, plan) in batch.iter().zip(&plans) {
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
            Err(_) => {
                batch
                    .drain(..)
                    .for_each(|op| op.fail("internal lock poisoned"));
                return;
            }
        }
    }
    phase.end("apply");
    shared.commits.fetch_add(1, Ordering::Relaxed);
    shared
        .committed_ops
        .fetch_add(batch.len() as u64, Ordering::Relaxed);
    crate::metrics::store_commit_ops(batch.len());
    for (op, plan) in batch.drain(..).zip(plans) {
        reply(shared, op, plan);
    }
    phase.end("reply");
}

/// Times the phases of one commit (`shuangkou_store_commit_phase_seconds`).
struct Phases(Instant);

impl Phases {
    fn start() -> Phases {
        Phases(Instant::now())
    }

    /// Records the time since the previous phase ended as `name`.
    fn end(&mut self, name: &'static str) {
        let now = Instant::now();
        crate::metrics::store_commit_phase(name, (now - self.0).as_secs_f64());
        self.0 = now;
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
