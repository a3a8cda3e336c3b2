//! The second stage of the embedded store's pipelined group commit: the syncer threads.
//!
//! The writer thread decides a batch and writes its frames (`pwrite`), then hands the batch here
//! and goes on with the next one. A syncer thread that is free takes every batch handed over
//! and not yet covered by a sync, and runs one `fdatasync` for all of them. With [`SYNCERS`]
//! threads, a batch written while a sync is in flight gets its own `fdatasync` started at once,
//! instead of waiting for the one in flight to end before its own starts: a write waits for
//! about one sync, not two. Concurrent `fdatasync` calls on one file overlap in the disk's queue:
//! on the bench machine, 3 threads syncing one file complete several times the syncs per second
//! of one thread (BENCHMARKS.md, "Service per store").
//!
//! The syncs end in any order, but their batches are finished in write order: a sync's batches
//! are applied to the index and answered only once it and every sync started before it have
//! ended, and only if all of them succeeded. So a batch is never answered before the sync of an
//! earlier batch, and never after an earlier batch was lost: a failed sync fails its batches and
//! every batch behind it that is not yet answered, and marks the store broken until the writer
//! has cut the journal back to the durable end this stage reports ([`Done`]).
//!
//! Each syncer syncs through its own open file description of the journal (a reopen of
//! `/proc/self/fd/N`): a write-back error is reported once per open file description, so with
//! a shared one a sync could take the error of a page another sync was waiting for, and the
//! other would report success.
//!
//! Must not be called from async code (it blocks on I/O); only [`super::EmbeddedStore`] starts it.

use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::journal::Rec;
use super::meters::Meters;
use super::ops::{NewScript, Op, Phases, Plan};
use super::{IoStep, Shared, join_thread, store_error};
use crate::store::{Appended, Created};

/// Batches written but not yet finished before the writer waits (back-pressure).
pub(super) const IN_FLIGHT: usize = 64;

/// Syncer threads, so at most this many `fdatasync`s in flight at once.
pub(super) const SYNCERS: usize = 3;

/// A batch the writer has written, for the syncers to make durable and answer.
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

/// How far the syncers have got: the last batch finished (answered or failed) and the end of
/// the durable journal data.
#[derive(Clone, Copy, Debug)]
pub(super) struct Done {
    pub(super) batches: u64,
    pub(super) durable: u64,
}

/// A sync started: the last batch it covers, and its outcome once it has ended.
struct Started {
    covers: u64,
    outcome: Option<Result<(), String>>,
}

/// What the writer and the syncers share.
struct Flow {
    /// Batches handed over and not yet finished, in write order.
    batches: VecDeque<Written>,
    /// The last batch covered by a sync started so far.
    started: u64,
    /// Syncs started whose batches are not yet finished, in start order.
    syncs: VecDeque<Started>,
    done: Done,
    /// The writer has closed the pipe: the syncers exit once every batch has a sync.
    closed: bool,
    /// Syncers waiting for work (`work` is signalled only if one is: each signal is a system
    /// call).
    idle: usize,
    /// The writer waits for batches to be finished (`changed` is signalled only then).
    writer_waits: bool,
}

/// [`Flow`] under its lock, with the two things waited for.
struct Line {
    flow: Mutex<Flow>,
    /// A batch was handed over, or the pipe closed (the syncers wait on it).
    work: Condvar,
    /// Batches were finished (the writer waits on it).
    changed: Condvar,
    /// Held while a thread finishes batches, so that they are applied and answered in order.
    finishing: Mutex<()>,
}

impl Line {
    fn lock(&self) -> MutexGuard<'_, Flow> {
        self.flow
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until batches are finished, at most 100 ms (so that stopped syncers are noticed).
    fn wait_changed<'a>(&self, mut flow: MutexGuard<'a, Flow>) -> MutexGuard<'a, Flow> {
        flow.writer_waits = true;
        let mut flow = match self.changed.wait_timeout(flow, Duration::from_millis(100)) {
            Ok((flow, _)) => flow,
            Err(poisoned) => poisoned.into_inner().0,
        };
        flow.writer_waits = false;
        flow
    }
}

/// How far the syncers have got, readable off the writer thread (the compaction thread copies
/// the journal up to the durable end).
pub(super) struct Progress(Arc<Line>);

impl Progress {
    /// The last batch finished and the durable end after it.
    pub(super) fn done(&self) -> Option<Done> {
        Some(self.0.lock().done)
    }

    /// A compaction swapped the journal for one whose data ends at `end`, with no batch in
    /// flight: from now on the durable end is that file's (a repair before the next sync cuts
    /// the new journal back to it, not to an offset in the old one).
    pub(super) fn swapped(&self, end: u64) {
        self.0.lock().done.durable = end;
    }
}

/// The writer's end of the pipeline: hands batches over and waits for them.
pub(super) struct Pipe {
    line: Arc<Line>,
    progress: Arc<Progress>,
    syncers: Vec<JoinHandle<()>>,
    /// Batches handed over so far.
    sent: u64,
}

impl Pipe {
    /// Starts the syncer threads; the journal's data is durable up to `durable`.
    pub(super) fn start(shared: Arc<Shared>, durable: u64) -> std::io::Result<Pipe> {
        let line = Arc::new(Line {
            flow: Mutex::new(Flow {
                batches: VecDeque::with_capacity(IN_FLIGHT),
                started: 0,
                syncs: VecDeque::with_capacity(SYNCERS),
                done: Done {
                    batches: 0,
                    durable,
                },
                closed: false,
                idle: 0,
                writer_waits: false,
            }),
            work: Condvar::new(),
            changed: Condvar::new(),
            finishing: Mutex::new(()),
        });
        let mut pipe = Pipe {
            progress: Arc::new(Progress(Arc::clone(&line))),
            line,
            syncers: Vec::with_capacity(SYNCERS),
            sent: 0,
        };
        for i in 0..SYNCERS {
            let (shared, line) = (Arc::clone(&shared), Arc::clone(&pipe.line));
            // On an error, dropping the pipe stops the syncers already started.
            pipe.syncers.push(
                std::thread::Builder::new()
                    .name(format!("shuangkou-store-syncer-{i}"))
                    .spawn(move || run_syncer(&shared, &line))?,
            );
        }
        Ok(pipe)
    }

    /// The number the next batch handed over gets.
    pub(super) fn next_no(&self) -> u64 {
        self.sent + 1
    }

    /// How far the syncers have got, shared (the compaction thread reads the durable end).
    pub(super) fn progress(&self) -> &Arc<Progress> {
        &self.progress
    }

    /// The last batch the syncers finished.
    pub(super) fn finished(&self) -> u64 {
        self.line.lock().done.batches
    }

    fn alive(&self) -> bool {
        self.syncers.iter().any(|t| !t.is_finished())
    }

    /// Hands a written batch over (waits while [`IN_FLIGHT`] batches are); if the syncers have
    /// stopped, fails its operations.
    pub(super) fn send(&mut self, batch: Written) {
        let mut flow = self.line.lock();
        loop {
            if !self.alive() {
                drop(flow);
                batch
                    .ops
                    .into_iter()
                    .for_each(|op| op.fail("store syncer stopped"));
                return;
            }
            if flow.batches.len() < IN_FLIGHT {
                break;
            }
            flow = self.line.wait_changed(flow);
        }
        self.sent = batch.no;
        flow.batches.push_back(batch);
        let wake = flow.idle > 0;
        drop(flow);
        if wake {
            self.line.work.notify_one();
        }
    }

    /// Waits until every batch handed over is finished; returns the durable end (`None`: the
    /// syncers stopped).
    pub(super) fn wait_idle(&self) -> Option<u64> {
        let mut flow = self.line.lock();
        while flow.done.batches < self.sent {
            if !self.alive() {
                return None;
            }
            flow = self.line.wait_changed(flow);
        }
        Some(flow.done.durable)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // The syncers finish what was handed over, then exit.
        self.line.lock().closed = true;
        self.line.work.notify_all();
        for t in self.syncers.drain(..) {
            join_thread(Some(t), "syncer");
        }
    }
}

/// A syncer thread: takes the batches not yet covered by a sync, runs one `fdatasync` for them,
/// then finishes every batch whose sync and earlier syncs have ended.
fn run_syncer(shared: &Shared, line: &Line) {
    // This thread's own open file description of the journal it last synced.
    let mut own: Option<(Arc<File>, File)> = None;
    let meters = Meters::register();
    while let Some((covers, journal, mut phase)) = next_sync(line, &meters) {
        let outcome = if shared.broken.load(Ordering::Acquire) {
            Err("the store is being repaired after a failed write".to_string())
        } else if let Some(journal) = &journal {
            shared
                .fault(IoStep::Sync)
                .and_then(|()| own_description(&mut own, journal).sync_data())
                .map_err(|e| format!("{}: {e}", shared.label))
        } else {
            Ok(())
        };
        if journal.is_some() {
            phase.end(&meters.sync);
        }
        let _finishing = line
            .finishing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let ready = {
            let mut flow = line.lock();
            if let Some(s) = flow.syncs.iter_mut().find(|s| s.covers == covers) {
                s.outcome = Some(outcome);
            }
            ended(&mut flow)
        };
        if ready.is_empty() {
            continue;
        }
        let done = finish(shared, ready, line.lock().done, &mut phase, &meters);
        let writer_waits = {
            let mut flow = line.lock();
            flow.done = done;
            flow.writer_waits
        };
        if writer_waits {
            line.changed.notify_all();
        }
    }
}

/// Waits for batches not yet covered by a sync and starts one for them: the last batch it
/// covers, the journal to sync (`None`: they wrote nothing) and its phases' clock. `None` once
/// the pipe is closed and every batch has a sync.
fn next_sync(line: &Line, meters: &Meters) -> Option<(u64, Option<Arc<File>>, Phases)> {
    let mut flow = line.lock();
    loop {
        let last = flow.batches.back().map_or(0, |b| b.no);
        if last > flow.started {
            let phase = Phases::start();
            let mut journal = None;
            for b in flow.batches.iter().filter(|b| b.no > flow.started) {
                meters.in_flight.record((phase.0 - b.at).as_secs_f64());
                if b.journal.is_some() {
                    journal.clone_from(&b.journal);
                }
            }
            flow.started = last;
            flow.syncs.push_back(Started {
                covers: last,
                outcome: None,
            });
            return Some((last, journal, phase));
        }
        if flow.closed {
            return None;
        }
        flow.idle += 1;
        flow = line
            .work
            .wait(flow)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        flow.idle -= 1;
    }
}

/// Takes the syncs that have ended with every sync started before them, with their batches.
fn ended(flow: &mut Flow) -> Vec<(Result<(), String>, Vec<Written>)> {
    let mut ready = Vec::new();
    while flow.syncs.front().is_some_and(|s| s.outcome.is_some()) {
        let Some(Started {
            covers,
            outcome: Some(outcome),
        }) = flow.syncs.pop_front()
        else {
            break;
        };
        let n = flow.batches.iter().take_while(|b| b.no <= covers).count();
        ready.push((outcome, flow.batches.drain(..n).collect()));
    }
    ready
}

/// The journal as this thread's own open file description (reopened when the journal changes;
/// the shared one if it cannot be reopened).
fn own_description<'a>(own: &'a mut Option<(Arc<File>, File)>, journal: &'a Arc<File>) -> &'a File {
    if !own.as_ref().is_some_and(|(of, _)| Arc::ptr_eq(of, journal)) {
        *own = match File::open(format!("/proc/self/fd/{}", journal.as_raw_fd())) {
            Ok(file) => Some((Arc::clone(journal), file)),
            Err(e) => {
                tracing::warn!(store = "embedded", error = %e,
                    "cannot reopen the journal for a syncer; it syncs the shared descriptor");
                None
            }
        };
    }
    own.as_ref().map_or(journal, |(_, file)| file)
}

/// Finishes ended syncs' batches in write order: applies and answers those of a successful sync,
/// fails those of a failed one and every one behind it (the store is then broken). Returns how
/// far the syncers have got.
fn finish(
    shared: &Shared,
    ready: Vec<(Result<(), String>, Vec<Written>)>,
    mut done: Done,
    phase: &mut Phases,
    meters: &Meters,
) -> Done {
    for (outcome, mut group) in ready {
        let last = group.last().map_or(done.batches, |b| b.no);
        let outcome = outcome.and_then(|()| {
            if shared.broken.load(Ordering::Acquire) {
                Err("an earlier commit failed".to_string())
            } else {
                Ok(())
            }
        });
        match outcome {
            Ok(()) => {
                done.durable = group.iter().map(|b| b.end).max().unwrap_or(done.durable);
                apply(shared, &mut group);
                phase.end(&meters.apply);
                let ops: usize = group.iter().map(|b| b.ops.len()).sum();
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .committed_ops
                    .fetch_add(ops as u64, Ordering::Relaxed);
                meters.ops.record(ops as f64);
                for b in group {
                    for (op, plan) in b.ops.into_iter().zip(b.plans) {
                        reply(shared, op, plan);
                    }
                }
                phase.end(&meters.reply);
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
        done.batches = last;
    }
    done
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
