//! Watching: one pub/sub connection per process, subscribed lazily to the channels of the
//! games watched here, fanning messages out to local broadcast channels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::Client;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;

use super::RedisStore;
use super::conn::{Conn, each_key};
use super::keys::Keys;

/// Buffered notifications per game before a slow watcher lags.
const WATCH_BUFFER: usize = 256;
/// How often channels nobody watches any more are unsubscribed.
const PRUNE_EVERY: Duration = Duration::from_secs(30);

/// Local watchers and the queue of subscriptions for the pub/sub task.
pub(super) struct Watchers {
    pub(super) map: Mutex<HashMap<String, broadcast::Sender<u64>>>,
    pub(super) requests: mpsc::UnboundedSender<String>,
}

impl Watchers {
    fn deliver(&self, id: &str, len: u64) {
        if let Ok(map) = self.map.lock() {
            if let Some(tx) = map.get(id) {
                let _ = tx.send(len);
            }
        }
    }

    /// Ids watched here (to subscribe after a reconnect).
    fn active(&self) -> Vec<String> {
        self.map
            .lock()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Removes and returns the ids nobody watches any more.
    fn prune(&self) -> Vec<String> {
        let Ok(mut map) = self.map.lock() else {
            return Vec::new();
        };
        let stale: Vec<String> = map
            .iter()
            .filter(|(_, tx)| tx.receiver_count() == 0)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &stale {
            map.remove(id);
        }
        stale
    }
}

impl RedisStore {
    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        let Ok(mut map) = self.watchers.map.lock() else {
            return broadcast::channel(1).1;
        };
        if let Some(tx) = map.get(id) {
            return tx.subscribe();
        }
        let (tx, rx) = broadcast::channel(WATCH_BUFFER);
        map.insert(id.to_string(), tx);
        // The pub/sub task subscribes, then sends the current length.
        let _ = self.watchers.requests.send(id.to_string());
        rx
    }
}

/// Sends the current log length of each id to its local watchers (after a (re)subscribe).
async fn resync(conn: &Conn, keys: &Keys, watchers: &Watchers, ids: &[String], timeout: Duration) {
    if ids.is_empty() {
        return;
    }
    let lens = ids.iter().map(|id| keys.log(id)).collect();
    match tokio::time::timeout(timeout, each_key::<u64>(conn, "LLEN", lens, &[])).await {
        Ok(Ok(lens)) => {
            for (id, len) in ids.iter().zip(lens) {
                if len > 0 {
                    watchers.deliver(id, len);
                }
            }
        }
        Ok(Err(e)) => tracing::warn!(store = "redis", error = %e, "watch resync failed"),
        Err(_) => tracing::warn!(store = "redis", "watch resync timed out"),
    }
}

/// The pub/sub connection: subscribes lazily, fans messages out, reconnects and resubscribes.
/// `clients` are the nodes to subscribe on (one Redis, or each node of a cluster, which
/// propagates every PUBLISH to all its nodes): the next one is tried after a failure.
pub(super) async fn pubsub_loop(
    clients: Vec<Client>,
    conn: Conn,
    keys: Keys,
    watchers: Arc<Watchers>,
    mut requests: mpsc::UnboundedReceiver<String>,
    timeout: Duration,
) {
    let mut next = 0;
    let mut backoff = Duration::from_millis(100);
    let mut warned = false;
    loop {
        let client = &clients[next % clients.len()];
        next += 1;
        let pubsub = match tokio::time::timeout(timeout, client.get_async_pubsub()).await {
            Ok(Ok(p)) => p,
            failed => {
                if !warned {
                    let error = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".to_string(),
                    };
                    tracing::warn!(store = "redis", error = %error, "pub/sub connection failed; retrying");
                    warned = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        let (mut sink, mut stream) = pubsub.split();
        // Subscriptions queued meanwhile are covered by the full resubscribe below.
        while requests.try_recv().is_ok() {}
        let ids = watchers.active();
        if !ids.is_empty() {
            let channels: Vec<String> = ids.iter().map(|id| keys.events(id)).collect();
            match tokio::time::timeout(timeout, sink.subscribe(channels)).await {
                Ok(Ok(())) => {}
                _ => {
                    tracing::warn!(store = "redis", "pub/sub resubscribe failed; retrying");
                    tokio::time::sleep(backoff).await;
                    continue;
                }
            }
        }
        if warned {
            tracing::info!(store = "redis", "pub/sub connection restored");
        }
        warned = false;
        backoff = Duration::from_millis(100);
        resync(&conn, &keys, &watchers, &ids, timeout).await;
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        prune.tick().await;
        loop {
            tokio::select! {
                msg = stream.next() => {
                    let Some(msg) = msg else {
                        tracing::warn!(store = "redis", "pub/sub connection lost; reconnecting");
                        break;
                    };
                    let Some(id) = keys.events_of(msg.get_channel_name()) else {
                        continue;
                    };
                    if let Ok(len) = msg.get_payload::<u64>() {
                        watchers.deliver(id, len);
                    }
                }
                id = requests.recv() => {
                    let Some(id) = id else { return };
                    match tokio::time::timeout(timeout, sink.subscribe(keys.events(&id))).await {
                        Ok(Ok(())) => resync(&conn, &keys, &watchers, &[id], timeout).await,
                        _ => {
                            tracing::warn!(store = "redis", "pub/sub subscribe failed; reconnecting");
                            break;
                        }
                    }
                }
                _ = prune.tick() => {
                    let stale = watchers.prune();
                    if !stale.is_empty() {
                        let channels: Vec<String> = stale.iter().map(|id| keys.events(id)).collect();
                        if !matches!(tokio::time::timeout(timeout, sink.unsubscribe(channels)).await, Ok(Ok(()))) {
                            break;
                        }
                    }
                }
            }
        }
    }
}
