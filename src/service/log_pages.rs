//! Reading a game's stored log a page at a time, for both game families (Shuangkou's
//! [`super::history`], 升級's `shengji::history`): the search for an old request, the events of
//! one old action out of a replay's pages, the whole decoded log. A reader holds one page.

use super::status::{ApiError, Reason};
use crate::store::{LogEntry, Store};
use std::future::Future;

/// Log entries read (and replayed) per step.
pub const PAGE: usize = 64;

/// The events of one action: (seq, accepted at, events).
pub type Paged<E> = (u64, u64, Vec<E>);

/// A replay of one game's log, a page of actions at a time (the creation, seq 0, first).
pub trait LogPages {
    /// What one action caused.
    type Event;

    /// The next actions' events, in order: at most [`PAGE`]; empty once the log has no more.
    fn next_page(
        &mut self,
        store: &Store,
    ) -> impl Future<Output = Result<Vec<Paged<Self::Event>>, ApiError>> + Send;
}

/// The events of the action at `seq` (accepted at, events), read from `pages` until it comes.
pub async fn action_at<P: LogPages>(
    mut pages: P,
    store: &Store,
    seq: u64,
) -> Result<(u64, Vec<P::Event>), ApiError> {
    loop {
        let page = pages.next_page(store).await?;
        if page.is_empty() {
            return Err(ApiError::new(
                Reason::BadRequest,
                format!("no action {seq}"),
            ));
        }
        if let Some((_, at, events)) = page.into_iter().find(|(s, _, _)| *s == seq) {
            return Ok((at, events));
        }
    }
}

/// The first of the log's entries after `after` and up to `before` that `found` picks out
/// (reading a page at a time; `found` decodes what it needs).
pub async fn find_entry<T>(
    store: &Store,
    id: &str,
    (mut after, before): (u64, u64),
    mut found: impl FnMut(&LogEntry) -> Result<Option<T>, ApiError>,
) -> Result<Option<T>, ApiError> {
    while after < before {
        let limit = PAGE.min(usize::try_from(before - after).unwrap_or(PAGE));
        let page = store.entries_page(id, after, limit).await?;
        let Some(last) = page.last() else {
            return Ok(None);
        };
        after = last.seq;
        for e in &page {
            if let Some(t) = found(e)? {
                return Ok(Some(t));
            }
        }
    }
    Ok(None)
}

/// Every stored log entry of a game, decoded by `decode` (GetReplay).
pub async fn decoded_log<T>(
    store: &Store,
    id: &str,
    decode: impl Fn(&LogEntry) -> Result<T, ApiError>,
) -> Result<Vec<T>, ApiError> {
    store
        .entries_after(id, 0)
        .await?
        .iter()
        .map(decode)
        .collect()
}
