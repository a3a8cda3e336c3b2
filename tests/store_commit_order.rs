//! The embedded store's commit order with several fsyncs in flight: a batch written while an
//! earlier batch's fsync is in flight gets its own fsync at once, and is still answered only
//! after the earlier batch is durable; when the earlier fsync fails, the later batch fails too,
//! even though its own fsync succeeded (never an acknowledged write behind a lost one).

#[path = "common/temp.rs"]
pub mod temp;

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shuangkou::store::embedded::{EmbeddedStore, Faults, IoStep};
use shuangkou::store::{Appended, GameRecord, LogEntry, Store, StoreError};
use temp::TempDir;

/// How long the hook waits for something another thread does before it gives up.
const DEADLINE: Duration = Duration::from_secs(10);

fn record(id: &str) -> GameRecord {
    GameRecord {
        id: id.to_string(),
        platform: None,
        request_id: None,
        body: format!("{{\"game\":\"{id}\"}}").into_bytes(),
        script: None,
    }
}

fn entry(seq: u64, body: &str) -> LogEntry {
    LogEntry {
        seq,
        body: body.as_bytes().to_vec(),
    }
}

/// What the fault hook saw of the commit fsyncs once armed.
#[derive(Default)]
struct Syncs {
    armed: AtomicBool,
    /// Fsyncs started since armed.
    started: AtomicU64,
    /// The second fsync started while the first was still in flight.
    overlapped: AtomicBool,
    /// The first fsync has ended (set just before its outcome is returned).
    first_ended: AtomicBool,
}

/// Waits (polling, at most [`DEADLINE`]) until `done` says so; false if the deadline passed.
fn wait_until(done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + DEADLINE;
    while !done() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// A store whose first fsync once armed waits for the second to start, holds on a little so that
/// the second fsync ends first, then ends with `first`'s outcome.
fn store_holding_the_first_sync(
    dir: &TempDir,
    first: fn() -> io::Result<()>,
) -> (Arc<Store>, Arc<Syncs>) {
    let syncs = Arc::new(Syncs::default());
    let faults: Faults = {
        let syncs = Arc::clone(&syncs);
        Arc::new(move |step: IoStep| {
            if step != IoStep::Sync || !syncs.armed.load(Ordering::SeqCst) {
                return Ok(());
            }
            if syncs.started.fetch_add(1, Ordering::SeqCst) != 0 {
                return Ok(());
            }
            let second = wait_until(|| syncs.started.load(Ordering::SeqCst) >= 2);
            syncs.overlapped.store(second, Ordering::SeqCst);
            if second {
                std::thread::sleep(Duration::from_millis(200));
            }
            syncs.first_ended.store(true, Ordering::SeqCst);
            first()
        })
    };
    let store = EmbeddedStore::open_with_faults(&**dir, faults).expect("open the store");
    (Arc::new(Store::Embedded(store)), syncs)
}

/// One append's outcome, and whether the first fsync had ended when it was answered.
type Answer = (&'static str, Result<Appended, StoreError>, bool);

/// Appends entry 1 to game `a`, then, once its fsync is in flight, entry 1 to game `b`; returns
/// both outcomes as they came back, each with whether the first fsync had ended by then (the
/// order of the two answers on the channel is the tasks' scheduling, not the store's; what the
/// store promises is that `b` is answered only after `a`'s fsync ends).
async fn two_batches(store: &Arc<Store>, syncs: &Arc<Syncs>) -> Vec<Answer> {
    for id in ["a", "b"] {
        store.create(&record(id)).await.expect("create");
    }
    syncs.armed.store(true, Ordering::SeqCst);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let answer = |id: &'static str, outcome, syncs: &Syncs| {
        (id, outcome, syncs.first_ended.load(Ordering::SeqCst))
    };
    let (s, t, seen) = (Arc::clone(store), tx.clone(), Arc::clone(syncs));
    tokio::spawn(async move {
        let outcome = s.append("a", &entry(1, "a1")).await;
        t.send(answer("a", outcome, &seen))
    });
    let until = Instant::now() + DEADLINE;
    while syncs.started.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < until,
            "the first append's fsync never started"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let (s, seen) = (Arc::clone(store), Arc::clone(syncs));
    tokio::spawn(async move {
        let outcome = s.append("b", &entry(1, "b1")).await;
        tx.send(answer("b", outcome, &seen))
    });
    let mut answered = Vec::new();
    for _ in 0..2 {
        let got = tokio::time::timeout(DEADLINE * 2, rx.recv())
            .await
            .expect("both appends are answered in time")
            .expect("an answer");
        answered.push(got);
    }
    answered
}

/// `b`, written while `a`'s fsync was in flight, was answered only after that fsync ended.
fn assert_answered_in_write_order(answered: &[Answer]) {
    let b = answered.iter().find(|(id, ..)| *id == "b");
    assert!(
        matches!(b, Some((_, _, true))),
        "answered out of write order (b before a's fsync ended): {answered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_written_during_a_sync_gets_its_own_and_is_answered_after_the_earlier_batch() {
    let dir = TempDir::fresh("store-commit-order", "answered-in-order");
    let (store, syncs) = store_holding_the_first_sync(&dir, || Ok(()));
    let answered = two_batches(&store, &syncs).await;
    assert!(
        syncs.overlapped.load(Ordering::SeqCst),
        "the second batch's fsync did not start while the first was in flight"
    );
    assert_answered_in_write_order(&answered);
    for (id, outcome, _) in &answered {
        assert_eq!(outcome, &Ok(Appended::Ok), "append to {id}");
    }
    for id in ["a", "b"] {
        let (_, log) = store.load(id).await.unwrap().expect("the game");
        assert_eq!(log.len(), 1, "{id}'s log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_whose_own_sync_succeeded_fails_when_an_earlier_batch_s_sync_failed() {
    let dir = TempDir::fresh("store-commit-order", "failed-before");
    let (store, syncs) =
        store_holding_the_first_sync(&dir, || Err(io::Error::other("simulated: fsync failed")));
    let answered = two_batches(&store, &syncs).await;
    assert!(
        syncs.overlapped.load(Ordering::SeqCst),
        "the second batch's fsync did not start while the first was in flight"
    );
    assert_answered_in_write_order(&answered);
    for (id, outcome, _) in &answered {
        assert!(outcome.is_err(), "append to {id} acknowledged: {outcome:?}");
    }
    // The journal was cut back to before both batches; the store takes writes again.
    assert_eq!(
        store.append("b", &entry(1, "b1 again")).await,
        Ok(Appended::Ok)
    );
    let (_, a) = store.load("a").await.unwrap().expect("game a");
    let (_, b) = store.load("b").await.unwrap().expect("game b");
    assert!(a.is_empty(), "a's failed append is in its log: {a:?}");
    assert_eq!(b, [entry(1, "b1 again")]);
}
