//! The store contract's cases for durable backends: everything acknowledged survives closing the
//! store and opening it again on the same data. Included by the durable backends' test files as
//! `#[path = "store_contract/durable.rs"] mod store_contract_durable;`.

use std::collections::HashSet;

use shuangkou::store::{Appended, Created, LogEntry};

use crate::store_contract::{Fixture, entry, pinned, record, same_shard_as, script};

/// A backend whose data outlives the store instance.
pub trait Durable: Fixture {
    /// Closes the store and opens it again on the same data.
    async fn reopen(&mut self);
}

pub async fn everything_survives_reopen<F: Durable>() {
    let Some(mut f) = F::start("reopen").await else {
        return;
    };
    for g in 0..20u64 {
        let store = f.store();
        let id = format!("g{g}");
        let rid = format!("req{g}");
        store
            .create(&record(&id, Some("p"), Some(&rid)))
            .await
            .unwrap();
        for seq in 1..=g + 1 {
            let appended = store.append(&id, &entry(seq, &format!("{id}/{seq}"))).await;
            assert_eq!(appended, Ok(Appended::Ok));
        }
        if g % 3 == 0 {
            store.finish(&id).await.unwrap();
        }
    }
    // Reopened without flush: every acknowledged write is already durable.
    f.reopen().await;
    let store = f.store();
    for g in 0..20u64 {
        let id = format!("g{g}");
        let (rec, log) = store.load(&id).await.unwrap().unwrap();
        assert_eq!(rec, record(&id, Some("p"), Some(&format!("req{g}"))));
        let expected: Vec<LogEntry> = (1..=g + 1)
            .map(|seq| entry(seq, &format!("{id}/{seq}")))
            .collect();
        assert_eq!(log, expected);
        // The idempotency index survived too.
        assert_eq!(
            store
                .create(&record(
                    &same_shard_as(&id),
                    Some("p"),
                    Some(&format!("req{g}"))
                ))
                .await,
            Ok(Created::Existing(id.clone()))
        );
        // And the log length: appends continue where they stopped.
        assert_eq!(
            store.append(&id, &entry(g + 1, "late")).await,
            Ok(Appended::Conflict { current: g + 1 })
        );
    }
    let expected: HashSet<String> = (0..20)
        .filter(|g| g % 3 != 0)
        .map(|g| format!("g{g}"))
        .collect();
    let unfinished: HashSet<String> = store.unfinished().await.unwrap().into_iter().collect();
    assert_eq!(unfinished, expected);
}

/// Records pinning scripts, in progress and finished, get them back after a reopen, and a new
/// game after it pins a known version.
pub async fn scripts_survive_reopen<F: Durable>() {
    let Some(mut f) = F::start("scripts-reopen").await else {
        return;
    };
    let scripts = [script("v1", 16), script("v2", 2)];
    for g in 0..6usize {
        let store = f.store();
        let id = format!("g{g}");
        let s = &scripts[g % 2];
        assert_eq!(store.create(&pinned(&id, s)).await, Ok(Created::New));
        store.append(&id, &entry(1, &id)).await.unwrap();
        if g % 3 == 0 {
            store.finish(&id).await.unwrap();
        }
    }
    f.reopen().await;
    let store = f.store();
    assert_eq!(
        store.create(&pinned("late", &scripts[0])).await,
        Ok(Created::New)
    );
    for g in 0..6usize {
        let id = format!("g{g}");
        let (rec, log) = store.load(&id).await.unwrap().unwrap();
        assert_eq!(rec, pinned(&id, &scripts[g % 2]), "game {id}");
        assert_eq!(log, vec![entry(1, &id)]);
    }
    let (late, _) = store.load("late").await.unwrap().unwrap();
    assert_eq!(late, pinned("late", &scripts[0]));
}
