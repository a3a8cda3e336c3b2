//! The embedded store's commit metrics (`shuangkou_store_commit_phase_seconds{phase}` and
//! `shuangkou_store_commit_ops`) as handles, registered once by each store thread when it
//! starts: `histogram!` with a label builds and looks up its key on every call, several times per
//! commit and once per queued operation.
//!
//! A handle records into the recorder installed when it was registered (the server installs
//! its recorder before it opens the store).

use metrics::Histogram;

use crate::metrics::{STORE_COMMIT_DURATION, STORE_COMMIT_OPS};

/// One store thread's handles, one per commit phase.
pub(super) struct Meters {
    /// From the submit to the writer taking the operation.
    pub(super) queued: Histogram,
    pub(super) plan: Histogram,
    pub(super) write: Histogram,
    pub(super) sync: Histogram,
    pub(super) apply: Histogram,
    pub(super) reply: Histogram,
    /// Operations per committed sync.
    pub(super) ops: Histogram,
}

impl Meters {
    pub(super) fn register() -> Meters {
        let phase =
            |name: &'static str| metrics::histogram!(STORE_COMMIT_DURATION, "phase" => name);
        Meters {
            queued: phase("queued"),
            plan: phase("plan"),
            write: phase("write"),
            sync: phase("sync"),
            apply: phase("apply"),
            reply: phase("reply"),
            ops: metrics::histogram!(STORE_COMMIT_OPS),
        }
    }
}
