#!/usr/bin/env bash
# Append-script calls per second on one Redis master (BENCHMARKS.md, "Redis memory and
# capacity"): the success path of the store's compare-and-append (`src/store/redis/scripts.rs`
# APPEND_LUA: LLEN, RPUSH, PUBLISH), called by its SHA from redis-benchmark over GAMES random
# games of one shard tag, with a BODY-byte entry, once without persistence and once with
# `appendonly yes` + `appendfsync always` (the `ha` overlay's setting), one after the other.
#
#   benches/redis_scripts.sh [out-dir]
#
# Environment: REQUESTS (default 200000), CLIENTS (default 50), GAMES (default 10000), BODY
# (default 200: about one SubmitPlay entry).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench-redis-scripts}
mkdir -p "$out"
REQUESTS=${REQUESTS:-200000}
CLIENTS=${CLIENTS:-50}
GAMES=${GAMES:-10000}
BODY=${BODY:-200}

. "$(dirname "$0")/ports.sh"

tmp=$(mktemp -d)
redis_pid=""
stop_redis() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  redis_pid=""
}
trap 'stop_redis; rm -rf "$tmp"' EXIT

SCRIPT="local n = redis.call('LLEN', KEYS[2])
n = redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], n)
return n"
body=$(head -c "$BODY" /dev/zero | tr '\0' 'x')

for mode in none always; do
  port=$(free_port)
  rm -rf "$tmp/data" && mkdir -p "$tmp/data"
  if [ "$mode" = always ]; then
    persist=(--appendonly yes --appendfsync always)
  else
    persist=(--appendonly no)
  fi
  redis-server --port "$port" --bind 127.0.0.1 --save '' "${persist[@]}" --dir "$tmp/data" \
    >"$tmp/redis.log" 2>&1 &
  redis_pid=$!
  wait_port "$port"
  sha=$(redis-cli -p "$port" SCRIPT LOAD "$SCRIPT")
  redis-benchmark -p "$port" -n "$REQUESTS" -c "$CLIENTS" -r "$GAMES" -q \
    EVALSHA "$sha" 2 "sk:{s1}:game:__rand_int__" "sk:{s1}:log:__rand_int__" "$body" \
    "sk:{s1}:events:__rand_int__" | tr '\r' '\n' | tail -1 | awk -F'__: ' '{print $NF}' |
    sed "s/^/appendfsync $mode, load $(cut -d' ' -f1 /proc/loadavg): /" |
    tee -a "$out/summary.txt"
  stop_redis
done
