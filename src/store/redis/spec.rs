//! The Redis store's spec: the URL for the client and the store's own query parameters.

use std::time::Duration;

use super::{DEFAULT_PREFIX, DEFAULT_RETENTION, DEFAULT_TIMEOUT};

/// Options of the Redis store (query parameters of the spec).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisOptions {
    /// Finished games expire after this (`None`: kept).
    pub retention: Option<Duration>,
    /// Deadline of each call.
    pub timeout: Duration,
    /// Key and channel prefix.
    pub prefix: String,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            retention: Some(DEFAULT_RETENTION),
            timeout: DEFAULT_TIMEOUT,
            prefix: DEFAULT_PREFIX.to_string(),
        }
    }
}

/// Splits a spec into the URL for the Redis client and our options
/// (`retention_secs`, `timeout_ms`, `prefix`; other parameters go to the client).
pub fn parse_spec(spec: &str) -> Result<(String, RedisOptions), String> {
    let mut options = RedisOptions::default();
    let (base, query) = match spec.split_once('?') {
        Some((b, q)) => (b, q),
        None => (spec, ""),
    };
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let number = || {
            v.parse::<u64>()
                .map_err(|_| format!("store option {k} must be a whole number, not {v:?}"))
        };
        match k {
            "retention_secs" => {
                let secs = number()?;
                options.retention = (secs > 0).then(|| Duration::from_secs(secs));
            }
            "timeout_ms" => {
                let ms = number()?;
                if ms == 0 {
                    return Err("store option timeout_ms must be positive".into());
                }
                options.timeout = Duration::from_millis(ms);
            }
            "prefix" => {
                if v.contains(['{', '}']) {
                    return Err(format!(
                        "store option prefix {v:?} must not contain braces: every key's hash \
                         tag is its game's shard (a braced prefix would put every key in one \
                         Redis Cluster slot)"
                    ));
                }
                options.prefix = v.to_string()
            }
            _ => rest.push(pair),
        }
    }
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((url, options))
}

/// The scheme of a Redis Cluster spec.
pub const CLUSTER_SCHEME: &str = "redis+cluster://";

/// The node URLs of a cluster URL (`redis+cluster://[user:password@]host:port,host:port[/0][?…]`,
/// after [`parse_spec`] took the store's own options out): `redis://[user:password@]host:port`
/// each, with the remaining query parameters. `None`: not a cluster URL.
pub fn cluster_nodes(url: &str) -> Option<Result<Vec<String>, String>> {
    let rest = url.strip_prefix(CLUSTER_SCHEME)?;
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, format!("?{q}")),
        None => (rest, String::new()),
    };
    let (auth, hosts) = match rest.rsplit_once('@') {
        Some((a, h)) => (format!("{a}@"), h),
        None => (String::new(), rest),
    };
    let hosts = match hosts.split_once('/') {
        Some((h, "" | "0")) => h,
        Some((_, db)) => {
            return Some(Err(format!(
                "a Redis Cluster has database 0 only, not {db:?}"
            )));
        }
        None => hosts,
    };
    let nodes: Vec<String> = hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| format!("redis://{auth}{h}{query}"))
        .collect();
    if nodes.is_empty() {
        return Some(Err(format!(
            "{CLUSTER_SCHEME} needs at least one node (host:port,host:port)"
        )));
    }
    Some(Ok(nodes))
}

/// The URL without credentials, for logs and errors.
pub(super) fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}
