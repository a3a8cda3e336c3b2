//! The store contract: one suite of behaviours every store backend must have (compare-and-append,
//! idempotent create, recovery lists, concurrency, and for durable stores everything surviving a
//! reopen, in `durable.rs`). Each backend's test file implements [`Fixture`] and expands
//! [`store_contract!`]: `tests/store_memory.rs`, `tests/store_embedded.rs`, `tests/store_redis.rs`.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use shuangkou::store::shard::shard_of;
use shuangkou::store::{
    AppendOrRead, Appended, Created, GameRecord, LogEntry, PinnedScript, Store,
};

/// One backend under test.
pub trait Fixture: Sized {
    /// A fresh, empty store for the test `name`; `None` when the backend is unavailable here
    /// (the fixture prints why, and fails instead when told to require it).
    async fn start(name: &str) -> Option<Self>;
    /// The store (shared with spawned tasks).
    fn store(&self) -> &Arc<Store>;
}

/// The contract's tests for fixture `$fixture`; `durable` adds the ones that reopen the store
/// (the fixture implements `Durable`, from `durable.rs`, which the binary includes as
/// `store_contract_durable`).
macro_rules! store_contract {
    ($fixture:ty) => {
        mod contract {
            use super::*;
            contract_cases!($fixture, store_contract;
                #[tokio::test] create_load_append_finish,
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                concurrent_appends_one_winner_per_seq,
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                concurrent_idempotent_creates,
                #[tokio::test] a_conflict_brings_the_missing_entries,
                #[tokio::test] scripts_are_kept_once_per_version,
                #[tokio::test] subscribers_see_every_length,
                #[tokio::test] head_is_the_record_and_the_log_length,
                #[tokio::test] unfinished_games_by_shard,
            );
        }
    };
    ($fixture:ty, durable) => {
        store_contract!($fixture);
        mod durable_contract {
            use super::*;
            contract_cases!($fixture, store_contract_durable;
                #[tokio::test] everything_survives_reopen,
                #[tokio::test] scripts_survive_reopen,
            );
        }
    };
}

/// One test per case `$name` (with its test attribute), running `crate::$suite::$name` on
/// `$fixture`.
macro_rules! contract_cases {
    ($fixture:ty, $suite:ident; $(#[$test:meta] $name:ident),* $(,)?) => {
        $(
            #[$test]
            async fn $name() {
                crate::$suite::$name::<$fixture>().await
            }
        )*
    };
}

pub fn record(id: &str, platform: Option<&str>, request_id: Option<&str>) -> GameRecord {
    GameRecord {
        id: id.into(),
        platform: platform.map(Into::into),
        request_id: request_id.map(Into::into),
        body: format!("{{\"game\":\"{id}\"}}").into_bytes(),
        script: None,
    }
}

/// A script text of `kb` KiB for version `hash` (distinct per hash).
pub fn script(hash: &str, kb: usize) -> PinnedScript {
    PinnedScript {
        hash: hash.into(),
        text: format!(
            "// version {hash}\n{}",
            "let x = 1;\n".repeat(kb * 1024 / 11)
        )
        .into(),
    }
}

/// `record` pinning `script`.
pub fn pinned(id: &str, script: &PinnedScript) -> GameRecord {
    GameRecord {
        script: Some(script.clone()),
        ..record(id, None, None)
    }
}

/// Records pinning a script get it back on load; the table is keyed by the version's hash (a
/// second text under a known hash is not stored: the first comes back), and a record without a
/// script (as written before the table) loads without one.
pub async fn scripts_are_kept_once_per_version<F: Fixture>() {
    let Some(f) = F::start("scripts").await else {
        return;
    };
    let store = f.store();
    let (v1, v2) = (script("v1", 16), script("v2", 4));
    let other_text = PinnedScript {
        text: "another text under v1".into(),
        ..v1.clone()
    };
    for (id, s) in [("a", &v1), ("b", &v1), ("c", &v2), ("d", &other_text)] {
        assert_eq!(store.create(&pinned(id, s)).await, Ok(Created::New));
    }
    assert_eq!(
        store.create(&record("old", None, None)).await,
        Ok(Created::New)
    );
    for (id, s) in [("a", &v1), ("b", &v1), ("c", &v2), ("d", &v1)] {
        let (rec, _) = store.load(id).await.unwrap().unwrap();
        assert_eq!(rec, pinned(id, s), "game {id}");
    }
    let (old, _) = store.load("old").await.unwrap().unwrap();
    assert_eq!(old.script, None);
    // Finished games keep theirs.
    store.append("a", &entry(1, "a/1")).await.unwrap();
    store.finish("a").await.unwrap();
    assert_eq!(
        store.load("a").await.unwrap().unwrap().0.script,
        Some(v1.clone())
    );
}

/// `Store::head` gives what `load` gives without the log: the same record (platform, request id,
/// pinned script) and the log's length, as the log grows and after the game is finished; `None`
/// for an unknown game.
pub async fn head_is_the_record_and_the_log_length<F: Fixture>() {
    let Some(f) = F::start("head").await else {
        return;
    };
    let store = f.store();
    let v1 = script("v1", 4);
    store.create(&pinned("p", &v1)).await.unwrap();
    store
        .create(&record("q", Some("acme"), Some("r9")))
        .await
        .unwrap();
    assert_eq!(store.head("nope").await, Ok(None));
    for n in 0..5u64 {
        for id in ["p", "q"] {
            let (rec, log) = store.load(id).await.unwrap().unwrap();
            assert_eq!(log.len() as u64, n, "game {id}");
            assert_eq!(store.head(id).await, Ok(Some((rec, n))), "game {id} at {n}");
        }
        store.append("p", &entry(n + 1, "p")).await.unwrap();
        store.append("q", &entry(n + 1, "q")).await.unwrap();
    }
    store.finish("p").await.unwrap();
    assert_eq!(
        store.head("p").await,
        Ok(Some((pinned("p", &v1), 5))),
        "finished"
    );
    assert_eq!(
        store.head("q").await,
        Ok(Some((record("q", Some("acme"), Some("r9")), 5)))
    );
}

pub fn entry(seq: u64, body: &str) -> LogEntry {
    LogEntry {
        seq,
        body: body.as_bytes().to_vec(),
    }
}

async fn unfinished(store: &Store) -> HashSet<String> {
    store.unfinished().await.unwrap().into_iter().collect()
}

fn set(ids: &[&str]) -> HashSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

pub async fn create_load_append_finish<F: Fixture>() {
    let Some(f) = F::start("basic").await else {
        return;
    };
    let store = f.store();
    store.ping().await.unwrap();

    assert_eq!(
        store.create(&record("g1", Some("acme"), Some("r1"))).await,
        Ok(Created::New)
    );
    // Same platform and request id: the existing game, whatever the new id (of the same shard:
    // see `ids_of_one_shard`).
    assert_eq!(
        store
            .create(&record(&same_shard_as("g1"), Some("acme"), Some("r1")))
            .await,
        Ok(Created::Existing("g1".into()))
    );
    // The key keeps platform and request id apart: ("a:b", "c") and ("a", "b:c") differ.
    assert_eq!(
        store.create(&record("g5", Some("a:b"), Some("c"))).await,
        Ok(Created::New)
    );
    assert_eq!(
        store.create(&record("g6", Some("a"), Some("b:c"))).await,
        Ok(Created::New)
    );
    // Same request id on another platform (or in open mode) is another game.
    assert_eq!(
        store.create(&record("g2", Some("other"), Some("r1"))).await,
        Ok(Created::New)
    );
    assert_eq!(
        store.create(&record("g3", None, Some("r1"))).await,
        Ok(Created::New)
    );
    assert_eq!(
        store.create(&record("g4", None, None)).await,
        Ok(Created::New)
    );
    // A taken id is an error.
    assert!(store.create(&record("g4", None, None)).await.is_err());

    let (rec, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(rec, record("g1", Some("acme"), Some("r1")));
    assert!(log.is_empty());
    let (rec, _) = store.load("g4").await.unwrap().unwrap();
    assert_eq!(rec, record("g4", None, None));
    assert_eq!(store.load("nope").await, Ok(None));

    assert_eq!(store.append("g1", &entry(1, "a")).await, Ok(Appended::Ok));
    for stale in [1, 3, 0] {
        assert_eq!(
            store.append("g1", &entry(stale, "b")).await,
            Ok(Appended::Conflict { current: 1 }),
            "append of seq {stale} to a log of 1"
        );
    }
    assert_eq!(store.append("g1", &entry(2, "b")).await, Ok(Appended::Ok));
    assert!(store.append("nope", &entry(1, "x")).await.is_err());

    let (_, log) = store.load("g1").await.unwrap().unwrap();
    assert_eq!(log, vec![entry(1, "a"), entry(2, "b")]);
    assert_eq!(store.entries_after("g1", 1).await, Ok(vec![entry(2, "b")]));
    assert_eq!(store.entries_after("g1", 2).await, Ok(vec![]));
    assert_eq!(store.entries_after("g1", u64::MAX).await, Ok(vec![]));
    assert_eq!(store.entries_after("nope", 0).await, Ok(vec![]));
    // Another game's log is separate.
    assert_eq!(store.entries_after("g2", 0).await, Ok(vec![]));
    // Log lengths, in the order asked (0 for a game not in the store).
    let asked = ["g1", "nope", "g2", "g1"].map(String::from);
    assert_eq!(store.log_lengths(&asked).await, Ok(vec![2, 0, 0, 2]));
    assert_eq!(store.log_lengths(&[]).await, Ok(vec![]));
    // A page is that range of the log, whatever the limit (up to `usize::MAX`: to the end).
    let both = vec![entry(1, "a"), entry(2, "b")];
    assert_eq!(store.entries_page("g1", 0, usize::MAX).await, Ok(both));
    assert_eq!(
        store.entries_page("g1", 0, 1).await,
        Ok(vec![entry(1, "a")])
    );
    assert_eq!(
        store.entries_page("g1", 1, 5).await,
        Ok(vec![entry(2, "b")])
    );
    assert_eq!(store.entries_page("g1", 0, 0).await, Ok(vec![]));
    assert_eq!(store.entries_page("g1", u64::MAX, 3).await, Ok(vec![]));

    assert_eq!(
        unfinished(store).await,
        set(&["g1", "g2", "g3", "g4", "g5", "g6"])
    );
    store.finish("g1").await.unwrap();
    store.finish("g1").await.unwrap();
    store.finish("nope").await.unwrap();
    assert_eq!(
        unfinished(store).await,
        set(&["g2", "g3", "g4", "g5", "g6"])
    );
    // Finished games are archived, not deleted (at least until a retention period).
    assert_eq!(
        store.load("g1").await.unwrap().unwrap().1,
        vec![entry(1, "a"), entry(2, "b")]
    );
    // `finish` of a missing game does not create a record.
    assert_eq!(store.load("nope").await, Ok(None));
    store.flush().await.unwrap();
}

/// `tasks` writers (task `t` on `stores[t % stores.len()]`) race to append every seq of
/// `from..=to` to game `game`, each entry's body naming its writer (`t{task}/{seq}`), each writer
/// going on from the length a conflict reports (never one behind its own seq); returns the
/// winner of each seq, asserting that no seq has two.
pub async fn race_for_every_seq(
    stores: &[Arc<Store>],
    game: &'static str,
    tasks: usize,
    from: u64,
    to: u64,
) -> BTreeMap<u64, usize> {
    let mut handles = Vec::new();
    for task in 0..tasks {
        let store = Arc::clone(&stores[task % stores.len()]);
        handles.push(tokio::spawn(async move {
            let mut won = Vec::new();
            let mut seq = from;
            while seq <= to {
                match store
                    .append(game, &entry(seq, &format!("t{task}/{seq}")))
                    .await
                {
                    Ok(Appended::Ok) => {
                        won.push(seq);
                        seq += 1;
                    }
                    Ok(Appended::Conflict { current }) => {
                        assert!(current >= seq, "length went backwards");
                        seq = current + 1;
                    }
                    Err(e) => panic!("append: {e}"),
                }
            }
            (task, won)
        }));
    }
    let mut winners = BTreeMap::new();
    for h in handles {
        let (task, won) = h.await.unwrap();
        for seq in won {
            assert!(
                winners.insert(seq, task).is_none(),
                "two winners for seq {seq}"
            );
        }
    }
    winners
}

/// `n` distinct ids starting with `prefix`, all of one shard. A create's idempotency key is
/// scoped to the shard of the id it creates (the Redis store keeps it under the game's hash tag):
/// the service derives the id from the request, so its retries always name one shard.
pub fn ids_of_one_shard(prefix: &str, n: usize) -> Vec<String> {
    let shard = shard_of(&format!("{prefix}0"));
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .filter(|id| shard_of(id) == shard)
        .take(n)
        .collect()
}

/// The unfinished games of one shard are those of [`Store::unfinished`] in that shard (by
/// `shard_of`, the shared partition): 60 games over many shards, a third finished.
pub async fn unfinished_games_by_shard<F: Fixture>() {
    let Some(f) = F::start("shards").await else {
        return;
    };
    let store = f.store();
    let mut open: BTreeMap<u16, HashSet<String>> = BTreeMap::new();
    for i in 0..60 {
        let id = format!("s{i}");
        store.create(&record(&id, None, None)).await.unwrap();
        if i % 3 == 0 {
            store.finish(&id).await.unwrap();
        } else {
            open.entry(shard_of(&id)).or_default().insert(id);
        }
    }
    assert!(open.len() > 10, "the ids spread over shards: {open:?}");
    let mut all = HashSet::new();
    for shard in shuangkou::store::shard::all_shards() {
        let ids: HashSet<String> = store
            .unfinished_in(shard)
            .await
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(
            ids,
            open.get(&shard).cloned().unwrap_or_default(),
            "shard {shard}"
        );
        all.extend(ids);
    }
    assert_eq!(all, unfinished(store).await);
    assert_eq!(all.len(), 40);
}

/// Another id of `id`'s shard.
pub fn same_shard_as(id: &str) -> String {
    (0..)
        .map(|i| format!("{id}-{i}"))
        .find(|other| shard_of(other) == shard_of(id))
        .unwrap_or_default()
}

/// `tasks` creates (task `i` on `stores[i % stores.len()]`, the `i`th id of
/// [`ids_of_one_shard`]) race with one platform (`p`) and request id; returns the ids created as
/// new and the ids the others were answered with.
pub async fn race_creates(
    stores: &[Arc<Store>],
    tasks: usize,
    prefix: &'static str,
    request_id: &'static str,
) -> (Vec<String>, HashSet<String>) {
    let mut handles = Vec::new();
    for (i, id) in ids_of_one_shard(prefix, tasks).into_iter().enumerate() {
        let store = Arc::clone(&stores[i % stores.len()]);
        handles.push(tokio::spawn(async move {
            let created = store
                .create(&record(&id, Some("p"), Some(request_id)))
                .await;
            (id, created.unwrap())
        }));
    }
    let mut new = Vec::new();
    let mut existing = HashSet::new();
    for h in handles {
        match h.await.unwrap() {
            (id, Created::New) => new.push(id),
            (_, Created::Existing(id)) => {
                existing.insert(id);
            }
        }
    }
    (new, existing)
}

pub async fn concurrent_appends_one_winner_per_seq<F: Fixture>() {
    const TASKS: usize = 16;
    const LEN: u64 = 150;
    let Some(f) = F::start("race").await else {
        return;
    };
    let store = f.store();
    store.create(&record("g", None, None)).await.unwrap();
    let winners = race_for_every_seq(std::slice::from_ref(store), "g", TASKS, 1, LEN).await;
    assert_eq!(winners.len() as u64, LEN);
    let (_, log) = store.load("g").await.unwrap().unwrap();
    assert_eq!(log.len() as u64, LEN);
    for (i, e) in log.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(e.seq, seq, "gap in the log");
        assert_eq!(
            e.body,
            format!("t{}/{seq}", winners[&seq]).into_bytes(),
            "seq {seq}"
        );
    }
}

pub async fn concurrent_idempotent_creates<F: Fixture>() {
    let Some(f) = F::start("idem").await else {
        return;
    };
    let store = f.store();
    let (new, existing) = race_creates(std::slice::from_ref(store), 20, "g", "same").await;
    assert_eq!(new.len(), 1, "exactly one create wins");
    assert!(existing.is_empty() || existing == HashSet::from([new[0].clone()]));
    assert_eq!(store.unfinished().await.unwrap(), new);
}

/// A subscriber sees the log length reach every appended seq (values may repeat or be stale,
/// never beyond the log).
pub async fn subscribers_see_every_length<F: Fixture>() {
    let Some(f) = F::start("subscribe").await else {
        return;
    };
    let store = f.store();
    store.create(&record("g", None, None)).await.unwrap();
    let mut rx = store.subscribe("g");
    for seq in 1..=3 {
        assert_eq!(store.append("g", &entry(seq, "x")).await, Ok(Appended::Ok));
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Ok(n)) if n == seq => break,
                Ok(Ok(n)) => assert!(n < seq, "notified {n} with a log of {seq}"),
                Ok(Err(e)) => panic!("subscription: {e}"),
                Err(_) => panic!("no notification of seq {seq} within 10 s"),
            }
        }
    }
}

/// `append_or_read`: an append, or on a conflict the entries after the caller's seq (what a
/// catch-up read returns), checked against `entries_after`.
pub async fn a_conflict_brings_the_missing_entries<F: Fixture>() {
    let Some(f) = F::start("append-or-read").await else {
        return;
    };
    let store = f.store();
    store.create(&record("g", None, None)).await.unwrap();
    for seq in 1..=3 {
        let r = store
            .append_or_read("g", &entry(seq, &format!("e{seq}")))
            .await;
        assert_eq!(r, Ok(AppendOrRead::Appended));
    }
    // A caller at seq 1 (appending 2) is behind by two entries.
    assert_eq!(
        store.append_or_read("g", &entry(2, "late")).await,
        Ok(AppendOrRead::Behind {
            current: 3,
            entries: vec![entry(2, "e2"), entry(3, "e3")]
        })
    );
    for (seq, after) in [(1, 0), (3, 2), (0, 0)] {
        let expected = store.entries_after("g", after).await.unwrap();
        assert_eq!(
            store.append_or_read("g", &entry(seq, "x")).await,
            Ok(AppendOrRead::Behind {
                current: 3,
                entries: expected
            }),
            "appending seq {seq}"
        );
    }
    // Ahead of the log: a conflict with nothing to read.
    assert_eq!(
        store.append_or_read("g", &entry(9, "x")).await,
        Ok(AppendOrRead::Behind {
            current: 3,
            entries: vec![]
        })
    );
    assert!(store.append_or_read("nope", &entry(1, "x")).await.is_err());
    // Nothing of the conflicting calls was appended.
    assert_eq!(store.load("g").await.unwrap().unwrap().1.len(), 3);
}
