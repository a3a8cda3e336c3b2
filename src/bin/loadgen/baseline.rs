//! The transport baseline: `grpc.health.v1.Health/Check` at the run's concurrency over the same
//! connections, timed like the game rpcs.

use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::stats::{Rpc, Stats};

/// Health/Check for `secs` seconds with `concurrency` callers: the statistics and the seconds
/// taken.
pub async fn baseline(
    channels: &[Channel],
    concurrency: usize,
    secs: f64,
) -> Result<(Stats, f64), String> {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let mut client = HealthClient::new(channels[i % channels.len()].clone());
        let mut stats = Stats::new()?;
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let t = Instant::now();
                let r = client
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await;
                stats.record(Rpc::Check, t, &r);
            }
            stats
        }));
    }
    let mut total = Stats::new()?;
    for t in tasks {
        total.merge(t.await.map_err(|e| e.to_string())?);
    }
    Ok((total, start.elapsed().as_secs_f64()))
}
