#!/usr/bin/env bash
# Redis calls per SubmitPlay with one replica and with three sharing one Redis (shard leases,
# forwarding to the owner), turn timers on, the load generator spreading every request over all
# replicas (`--target a,b,c`) (BENCHMARKS.md, "Replicas that divide the work").
#
#   benches/replicas_per_play.sh BIN_DIR [out-dir]
#
# BIN_DIR holds `shuangkou` and `shuangkou-load` (a release build). Rounds alternate 1 and 3
# replicas (ABBA). Each run: a private loopback redis-server, flushed; the replicas started with
# turn timers on; a wait until every shard lease is held fairly (42-43 each for 3); the command
# statistics reset; one closed-loop load run; then `INFO commandstats` (every command, the lease
# loop's heartbeats, lease reads and renewals included) against the plays the load generator
# counted. A summary per round and the medians close the output (`summary.txt` in the out-dir).
# Environment: ROUNDS (default 2), DURATION (s, default 10), CONC (default 32), GAMES (default
# 256), SEED (default 1), REDIS_PORT (default 16391).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:?binaries}
out=${2:-target/bench-replicas}
mkdir -p "$out"
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}
CONC=${CONC:-32}
GAMES=${GAMES:-256}
SEED=${SEED:-1}
REDIS_PORT=${REDIS_PORT:-16391}

tmp=$(mktemp -d)
pids=()
redis_pid=""
stop_servers() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop_servers
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/ports.sh"

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
  >"$tmp/redis.log" 2>&1 &
redis_pid=$!
wait_port "$REDIS_PORT"
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# Waits (at most 60 s) until the 128 leases are held, each replica holding 128/n rounded.
wait_balanced() { # n
  local n=$1 keys=() i
  for i in $(seq 0 127); do keys+=("sk:{s$i}:lease"); done
  for _ in $(seq 1 300); do
    if rcli MGET "${keys[@]}" | python3 -c '
import sys, collections, math
n = int(sys.argv[1])
vals = [l.strip() for l in sys.stdin if l.strip()]
held = collections.Counter(v.split(" ")[1] for v in vals if " " in v)
ok = sum(held.values()) == 128 and len(held) == n and all(128 // n <= c <= math.ceil(128 / n) for c in held.values())
sys.exit(0 if ok else 1)' "$n"; then
      sleep 2 # one more round of every lease loop: routing tables current
      return 0
    fi
    sleep 0.2
  done
  echo "leases not balanced over $n replicas" >&2
  return 1
}

run() { # name replicas
  local name=$1 n=$2 targets=() port i
  rcli FLUSHALL >/dev/null
  for i in $(seq 1 "$n"); do
    port=$(free_port)
    "$bin/shuangkou" serve --listen "127.0.0.1:$port" --no-metrics --no-web \
      --store "redis://127.0.0.1:$REDIS_PORT/0" >"$out/$name-server$i.log" 2>&1 &
    pids+=($!)
    wait_port "$port"
    targets+=("127.0.0.1:$port")
  done
  wait_balanced "$n"
  rcli CONFIG RESETSTAT >/dev/null
  local list
  list=$(IFS=,; echo "${targets[*]}")
  "$bin/shuangkou-load" --target "$list" --variant baibian --seed "$SEED" --json \
    --games "$GAMES" --concurrency "$CONC" --duration "$DURATION" \
    >"$out/$name.json" || true
  rcli INFO commandstats >"$out/$name.commandstats"
  stop_servers
}

uptime | tee "$out/uptime-start.txt"
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="1 3"; else order="3 1"; fi
  for n in $order; do
    run "r$round-n$n" "$n"
  done
done
uptime | tee "$out/uptime-end.txt"

# Redis 7 counts the commands a script runs in `commandstats` too (the append script's LLEN, RPUSH
# and PUBLISH). Calls sent by the replicas are the scripts (EVALSHA: appends, creates, finishes;
# EVAL: lease heartbeats, one per ZADD, and renewals), the lease scan's GETs (all GETs less the
# one inside each renewal), and the plain reads (HMGET, LRANGE, PING, SET, SCRIPT LOAD).
python3 - "$out" "$ROUNDS" <<'EOF' | tee "$out/summary.txt"
import json, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
per = {1: [], 3: []}
for rnd in range(1, rounds + 1):
    for n in (1, 3):
        name = f"r{rnd}-n{n}"
        r = json.load(open(f"{out}/{name}.json"))
        st = {}
        for line in open(f"{out}/{name}.commandstats"):
            m = re.match(r"cmdstat_([\w|]+):calls=(\d+),", line)
            if m:
                st[m[1]] = int(m[2])
        plays = max(r["plays"], 1)
        evals = st.get("eval", 0)
        renewals = evals - st.get("zadd", 0)
        scan = st.get("get", 0) - renewals
        lease = evals + scan
        plain = sum(st.get(k, 0) for k in ("hmget", "lrange", "ping", "set", "script|load"))
        sent = st.get("evalsha", 0) + lease + plain
        per[n].append(sent / plays)
        print(f"round {rnd}, {n} replica(s): {r['plays']} plays, {r['plays_per_second']:.0f} plays/s, "
              f"ok {r['ok']}, verified {r['verified']}; Redis calls sent per play {sent / plays:.3f} "
              f"(EVALSHA {st.get('evalsha', 0) / plays:.3f}, lease loop {lease} = {lease / plays:.3f}, "
              f"reads {plain / plays:.3f})")
for n in (1, 3):
    print(f"{n} replica(s): median Redis calls sent per play {statistics.median(per[n]):.3f} "
          f"(range {min(per[n]):.3f}-{max(per[n]):.3f})")
EOF
