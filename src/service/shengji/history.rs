//! A 升級 table's past beyond what it keeps (`service::backlog`), re-derived from the store's
//! log, as Shuangkou's `service::history` does: the events of old requests for a WatchGame from
//! an old seq, the reply to an idempotent retry of an old request, the whole log for GetReplay.
//!
//! Events are re-derived by replaying the log on a fresh table from the creation (the live
//! table's record and pinned hooks: no script is compiled again), a page of entries at a time,
//! each checked against its recorded state hashes, so a reader holds one page and one table.

use super::entry::{Stored, TableEvent, decode};
use super::family::{SharedTable, Tables};
use super::table::Table;
use crate::service::log_pages::{self, LogPages, Paged};
use crate::service::status::ApiError;
use crate::store::Store;

pub use crate::service::log_pages::PAGE;

/// The events of one request: (seq, accepted at, events).
pub type Request = Paged<TableEvent>;

/// A replay of one table's log from its creation, a page at a time.
pub struct History {
    /// The table after the last entry replayed.
    table: Table,
    id: String,
    started: bool,
    done: bool,
}

impl History {
    /// A replay of `live`'s log (from the creation; nothing read yet).
    pub fn new(live: &Table) -> Result<History, ApiError> {
        Ok(History {
            table: live.fresh(PAGE + 1)?,
            id: live.record.base.id.clone(),
            started: false,
            done: false,
        })
    }
}

impl LogPages for History {
    type Event = TableEvent;

    /// The next requests' events in order (the creation, seq 0, first): at most [`PAGE`];
    /// empty once the stored log has no more.
    async fn next_page(&mut self, store: &Store) -> Result<Vec<Request>, ApiError> {
        if !self.started {
            self.started = true;
            let (at, events) = self.table.action_at(0)?;
            return Ok(vec![(0, at, events.to_vec())]);
        }
        if self.done {
            return Ok(Vec::new());
        }
        let entries = store.entries_page(&self.id, self.table.seq(), PAGE).await?;
        if entries.is_empty() {
            self.done = true;
        }
        let mut page = Vec::with_capacity(entries.len());
        for e in &entries {
            self.table.apply_entry(e)?;
            let (at, events) = self.table.action_at(e.seq)?;
            page.push((e.seq, at, events.to_vec()));
        }
        Ok(page)
    }
}

/// The events of the request at `seq`: kept by the table, or replayed from the store.
pub async fn events_of(
    store: &Store,
    live: &Table,
    seq: u64,
) -> Result<(u64, Vec<TableEvent>), ApiError> {
    if seq >= live.first_kept() {
        let (at, events) = live.action_at(seq)?;
        return Ok((at, events.to_vec()));
    }
    log_pages::action_at(History::new(live)?, store, seq).await
}

/// The seq of the request `player` made with `request_id` among the log's entries after
/// `after` and up to `before` (decoding only, a page at a time).
pub async fn find_request(
    store: &Store,
    id: &str,
    player: u8,
    request_id: &str,
    range: (u64, u64),
) -> Result<Option<u64>, ApiError> {
    log_pages::find_entry(store, id, range, |e| {
        let s = decode(e)?;
        let mine = s.player == player && s.request_id.as_deref() == Some(request_id);
        Ok(mine.then_some(e.seq))
    })
    .await
}

/// The request `player` already made with `request_id`, if any, and its events: a kept one, one
/// whose key the table still remembers (its entry confirmed in the store), or, with
/// `whole_log`, any older one (a retry refused as a new request: the whole log is read).
pub async fn retried(
    store: &Store,
    live: &Table,
    player: u8,
    request_id: &str,
    whole_log: bool,
) -> Result<Option<Request>, ApiError> {
    let seq = match live.request_seq(player, request_id) {
        Some(seq) => Some(seq),
        None => {
            let id = &live.record.base.id;
            let range = match live.remembered_seq(player, request_id) {
                Some(seq) => Some((seq - 1, seq)),
                None => whole_log.then_some((0, live.first_kept())),
            };
            match range {
                Some(range) => find_request(store, id, player, request_id, range).await?,
                None => None,
            }
        }
    };
    let Some(seq) = seq else {
        return Ok(None);
    };
    let (at, events) = events_of(store, live, seq).await?;
    Ok(Some((seq, at, events)))
}

/// What a WatchGame stream sends next after seq `after` (`None`: from the creation): the
/// table's kept events, or, while the stream is behind what the table keeps, the next page
/// replayed from the store (`replay` holds that replay between calls; the table's lock is not
/// held while the store is read).
pub async fn watch_batch(
    tables: &Tables,
    table: &SharedTable,
    replay: &mut Option<History>,
    after: Option<u64>,
) -> Result<Vec<(u64, u64, TableEvent)>, ApiError> {
    {
        let live = tables.current(table).await?;
        let from = after.map_or(0, |a| a.saturating_add(1));
        if from >= live.first_kept() {
            *replay = None;
            return Ok(live
                .events_after(after)
                .map(|(seq, at, e)| (seq, at, e.clone()))
                .collect());
        }
        if replay.is_none() {
            *replay = Some(History::new(&live)?);
        }
    }
    let Some(history) = replay.as_mut() else {
        return Ok(Vec::new());
    };
    loop {
        let page = history.next_page(tables.store()).await?;
        if page.is_empty() {
            return Ok(Vec::new());
        }
        let batch: Vec<_> = page
            .into_iter()
            .filter(|(seq, _, _)| after.is_none_or(|a| *seq > a))
            .flat_map(|(seq, at, events)| events.into_iter().map(move |e| (seq, at, e)))
            .collect();
        if !batch.is_empty() {
            return Ok(batch);
        }
    }
}

/// Every stored log entry of a table, decoded (GetReplay).
pub async fn stored_log(store: &Store, id: &str) -> Result<Vec<Stored>, ApiError> {
    log_pages::decoded_log(store, id, decode).await
}
