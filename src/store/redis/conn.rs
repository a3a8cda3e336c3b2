//! The store's connection: one Redis (a [`ConnectionManager`]) or a Redis Cluster (the `redis`
//! crate's cluster client, which routes each command by its key's slot and follows `MOVED`).
//! Both are cheap to clone and implement [`ConnectionLike`], so every call site writes
//! `let mut conn = self.conn.clone(); cmd.query_async(&mut conn)` for either.
//!
//! The cluster connection is made on first use (like the connection manager, which connects
//! lazily): opening the store never waits for the network, and a failed first connection is
//! that call's error and is tried again by the next one.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use tokio::sync::OnceCell;

/// A connection to one Redis or to a cluster.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(LazyCluster),
}

/// A cluster connection made on first use.
#[derive(Clone)]
pub(crate) struct LazyCluster {
    client: Arc<ClusterClient>,
    conn: Arc<OnceCell<ClusterConnection>>,
}

impl LazyCluster {
    pub(super) fn new(client: ClusterClient) -> LazyCluster {
        LazyCluster {
            client: Arc::new(client),
            conn: Arc::new(OnceCell::new()),
        }
    }

    async fn get(&self) -> redis::RedisResult<ClusterConnection> {
        self.conn
            .get_or_try_init(|| self.client.get_async_connection())
            .await
            .cloned()
    }
}

impl Conn {
    /// Whether this is a cluster: commands of one pipeline must then share a slot.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self, Conn::Cluster(_))
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(lazy) => Box::pin(async move {
                let mut c = lazy.get().await?;
                c.req_packed_command(cmd).await
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(lazy) => Box::pin(async move {
                let mut c = lazy.get().await?;
                c.req_packed_commands(cmd, offset, count).await
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(_) => 0,
        }
    }
}

/// The cluster client for `nodes` (`redis://host:port` each), with the store's deadline on every
/// connection and response. Redirections (`MOVED`, `ASK`) and a connection lost before a command
/// was sent are retried by the client within the same deadline.
pub(super) fn cluster_client(
    nodes: &[String],
    timeout: Duration,
) -> redis::RedisResult<ClusterClient> {
    ClusterClient::builder(nodes.iter().map(String::as_str))
        .connection_timeout(timeout)
        .response_timeout(timeout)
        .retries(2)
        .max_retry_wait(200)
        .build()
}

/// The hash tag of `key` (what Redis Cluster hashes: the text inside its first `{…}`), or the
/// whole key.
fn slot_text(key: &str) -> &str {
    key.find('{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            rest.find('}')
                .filter(|&close| close > 0)
                .map(|close| &rest[..close])
        })
        .unwrap_or(key)
}

/// `name key args…` for each of `keys`, answered in order: one pipeline on one Redis; on a
/// cluster one pipeline per hash tag (keys of one tag share a slot), the pipelines concurrently.
pub(crate) async fn each_key<T>(
    conn: &Conn,
    name: &'static str,
    keys: Vec<String>,
    args: &'static [&'static str],
) -> redis::RedisResult<Vec<T>>
where
    T: redis::FromRedisValue + Send + 'static,
{
    let pipeline = |keys: &[(usize, String)]| {
        let mut pipe = redis::pipe();
        for (_, key) in keys {
            pipe.cmd(name).arg(key).arg(args);
        }
        pipe
    };
    if !conn.is_cluster() {
        let indexed: Vec<(usize, String)> = keys.into_iter().enumerate().collect();
        let mut c = conn.clone();
        return pipeline(&indexed).query_async(&mut c).await;
    }
    let n = keys.len();
    let mut groups: std::collections::HashMap<String, Vec<(usize, String)>> = Default::default();
    for (i, key) in keys.into_iter().enumerate() {
        groups
            .entry(slot_text(&key).to_string())
            .or_default()
            .push((i, key));
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (_, group) in groups {
        let mut c = conn.clone();
        let pipe = pipeline(&group);
        tasks.spawn(async move {
            let answers: Vec<T> = pipe.query_async(&mut c).await?;
            Ok::<_, redis::RedisError>(
                group
                    .into_iter()
                    .map(|(i, _)| i)
                    .zip(answers)
                    .collect::<Vec<_>>(),
            )
        });
    }
    let mut all: Vec<Option<T>> = (0..n).map(|_| None).collect();
    while let Some(done) = tasks.join_next().await {
        let answered = done.map_err(|e| {
            redis::RedisError::from((redis::ErrorKind::Io, "read task failed", e.to_string()))
        })??;
        for (i, v) in answered {
            all[i] = Some(v);
        }
    }
    all.into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                redis::RedisError::from((redis::ErrorKind::Io, "a pipeline answered short"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::slot_text;

    #[test]
    fn the_slot_text_is_the_first_hash_tag() {
        assert_eq!(slot_text("sk:{s7}:game:g"), "s7");
        assert_eq!(slot_text("sk:game:g"), "sk:game:g");
        assert_eq!(slot_text("a{}b{c}"), "a{}b{c}");
    }
}
