//! The vocabulary of the embedded store's group commit, shared by its two steps (the writer,
//! [`super::writer`], and the syncer, [`super::syncer`]): the queued operations, what the writer
//! decided for each, and the timing of the commit phases.

use std::time::Instant;

use metrics::Histogram;

use tokio::sync::oneshot;

use super::journal::Span;
use super::store_error;
use crate::store::{Appended, Created, GameRecord, LogEntry, StoreError};

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

    pub(super) fn fail(self, message: &str) {
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
pub(super) enum Plan {
    Created(Result<Created, String>),
    Appended(Result<Appended, String>),
    /// A frame was written for the op (create, append or finish) at this span; `at` is a
    /// finish's time.
    Written(Span, u64),
    Done,
}

/// A script frame a batch writes (before the create of op `op`, the first to pin it).
pub(super) struct NewScript {
    pub(super) span: Span,
    pub(super) op: usize,
}

/// Times the phases of one commit (`shuangkou_store_commit_phase_seconds`).
pub(super) struct Phases(pub(super) Instant);

impl Phases {
    pub(super) fn start() -> Phases {
        Phases(Instant::now())
    }

    /// Records the time since the previous phase ended into `phase`'s histogram.
    pub(super) fn end(&mut self, phase: &Histogram) {
        let now = Instant::now();
        phase.record((now - self.0).as_secs_f64());
        self.0 = now;
    }
}
