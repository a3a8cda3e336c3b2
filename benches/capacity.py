#!/usr/bin/env python3
"""Replicas and Redis masters for a number of tables, computed from measured unit costs.

    python3 benches/capacity.py                  # the plan for 10k, 100k and 1M tables
    python3 benches/capacity.py --tables 250000 --retention-days 2 --fsync always

Every unit figure below is a measurement written in BENCHMARKS.md ("Redis memory and capacity",
with its command and commit); change them there and here together. A table is one game in
progress; its players play one action every PLAY_INTERVAL_S seconds, and when its match ends a
new one starts at the same table, so a busy table finishes MATCHES_PER_TABLE_DAY matches a day,
each kept (compacted) for the retention.

The plan is the larger of each resource's need, with HEADROOM kept free everywhere:
- replicas: by memory (a replica holds the games of the shards it owns) and by CPU (server
  CPU per play), at least MIN_REPLICAS;
- Redis masters: by script calls per second (one compare-and-append per play, REDIS_CALLS_PER_PLAY
  calls with timers on) and by memory (games in progress + finished matches within retention),
  at least MIN_MASTERS; the 128 shards cap useful masters at 128.
"""

import argparse
import math

# --- measured unit costs (BENCHMARKS.md, "Redis memory and capacity") ---------------------------
# Server RSS per game in progress on one replica, Redis store (20,000 games recovered: 143.6 MB,
# issue 39's measurement, quoted in BENCHMARKS.md, "Redis memory and capacity").
REPLICA_BYTES_PER_GAME = 7_180
# Server CPU per SubmitPlay, one replica on Redis, timers on (issue 39: 153 µs).
REPLICA_CPU_S_PER_PLAY = 153e-6
# Redis script calls per SubmitPlay (issue 39's target with replicas owning shards: <= 1.1).
REDIS_CALLS_PER_PLAY = 1.1
# Append-script calls per second on one master (benches/redis_scripts.sh), by AOF fsync mode.
MASTER_CALLS_PER_S = {"none": 30_969, "always": 16_255}
# Redis used_memory per game in progress, mid-match (8-deal baibian, 560 plays;
# benches/redis_memory.sh, 100 games) and per finished 8-deal match, compacted (same script, 32
# matches). Both include the shards' fixed keys (script copies, unfinished sets) spread over so few
# games: conservative.
REDIS_BYTES_PER_GAME = 168_501
REDIS_BYTES_PER_FINISHED_MATCH = 131_755

# --- deployment choices (deploy/overlays/ha, deploy/README.md) ------------------------------------
REPLICA_MEMORY_LIMIT = 1 << 30  # deploy/base/deployment.yaml: limits.memory 1Gi
REPLICA_CPU_LIMIT = 2.0  # limits.cpu "2"
REPLICA_BASE_BYTES = 19 << 20  # an empty server's RSS (BENCHMARKS.md, "Memory at scale")
MASTER_MEMORY = 25 << 30  # usable maxmemory of one master (a 32 GB node, 25 GB for data)
HEADROOM = 0.30  # kept free: bursts, a replica or a master lost, rebalancing
MIN_REPLICAS = 3
MIN_MASTERS = 3
SHARDS = 128  # src/store/shard.rs

# --- the load model ---------------------------------------------------------------------------
PLAY_INTERVAL_S = 3.0  # one action per table every 3 s
ACTIONS_PER_MATCH = 1_120  # an 8-deal baibian match (BENCHMARKS.md, "Long matches": 140 a deal)


def plan(tables, retention_days, fsync):
    usable = 1.0 - HEADROOM
    plays_per_s = tables / PLAY_INTERVAL_S
    matches_per_table_day = 86_400 / PLAY_INTERVAL_S / ACTIONS_PER_MATCH
    finished_kept = tables * matches_per_table_day * retention_days

    games_per_replica = (REPLICA_MEMORY_LIMIT * usable - REPLICA_BASE_BYTES) / REPLICA_BYTES_PER_GAME
    plays_per_replica = REPLICA_CPU_LIMIT * usable / REPLICA_CPU_S_PER_PLAY
    replicas = max(
        MIN_REPLICAS,
        math.ceil(tables / games_per_replica),
        math.ceil(plays_per_s / plays_per_replica),
    )

    calls_per_s = plays_per_s * REDIS_CALLS_PER_PLAY
    redis_bytes = tables * REDIS_BYTES_PER_GAME + finished_kept * REDIS_BYTES_PER_FINISHED_MATCH
    masters = max(
        MIN_MASTERS,
        math.ceil(calls_per_s / (MASTER_CALLS_PER_S[fsync] * usable)),
        math.ceil(redis_bytes / (MASTER_MEMORY * usable)),
    )
    return {
        "tables": tables,
        "plays_per_s": plays_per_s,
        "replicas": replicas,
        "replicas_by_memory": math.ceil(tables / games_per_replica),
        "replicas_by_cpu": math.ceil(plays_per_s / plays_per_replica),
        "calls_per_s": calls_per_s,
        "redis_gb": redis_bytes / 1e9,
        "finished_kept": finished_kept,
        "masters": masters,
        "masters_by_calls": math.ceil(calls_per_s / (MASTER_CALLS_PER_S[fsync] * usable)),
        "masters_by_memory": math.ceil(redis_bytes / (MASTER_MEMORY * usable)),
        "warning": "more masters than shards: raise SHARDS" if masters > SHARDS else "",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, action="append", help="tables in progress")
    parser.add_argument("--retention-days", type=float, default=7.0)
    parser.add_argument("--fsync", choices=sorted(MASTER_CALLS_PER_S), default="always")
    args = parser.parse_args()
    sizes = args.tables or [10_000, 100_000, 1_000_000]
    print(
        f"retention {args.retention_days:g} d, appendfsync {args.fsync}, headroom {HEADROOM:.0%}, "
        f"one play per table every {PLAY_INTERVAL_S:g} s"
    )
    print()
    print(
        "| tables | plays/s | replicas (memory / CPU) | script calls/s | Redis memory "
        "(finished matches kept) | masters (calls / memory) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for tables in sizes:
        p = plan(tables, args.retention_days, args.fsync)
        print(
            f"| {p['tables']:,} | {p['plays_per_s']:,.0f} | **{p['replicas']}** "
            f"({p['replicas_by_memory']} / {p['replicas_by_cpu']}) | {p['calls_per_s']:,.0f} | "
            f"{p['redis_gb']:,.1f} GB ({p['finished_kept']:,.0f}) | **{p['masters']}** "
            f"({p['masters_by_calls']} / {p['masters_by_memory']}) {p['warning']}|"
        )


if __name__ == "__main__":
    main()
