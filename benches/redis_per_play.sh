#!/usr/bin/env bash
# The Redis store's cost per play against the memory store's, two server builds side by side
# (BENCHMARKS.md, "Service per store").
#
#   benches/redis_per_play.sh BEFORE_BIN AFTER_BIN [out-dir]
#
# BEFORE_BIN and AFTER_BIN are directories holding `shuangkou` and `shuangkou-load` release
# binaries. Every round runs the builds in ABBA order (odd rounds A then B, even rounds B then
# A); each build serves a closed-loop run on the memory store, then one on Redis (a private
# loopback redis-server, flushed before each run), with the same load generator (AFTER_BIN's).
# For each Redis run the script records `INFO commandstats` (calls, usec_per_call) and the
# redis-server's own CPU (utime + stime from /proc) per play, beside the load generator's JSON.
# A summary per round and the medians close the output (`summary.txt` in the out-dir).
# Environment: ROUNDS (default 4), DURATION (s, default 10), CONC (default 32), GAMES (default
# 256), HINTS (local|server, default local), SEED (default 1), REDIS_PORT (default 16389).
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?before binaries}
after=${2:?after binaries}
out=${3:-target/bench-redis}
mkdir -p "$out"
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-10}
CONC=${CONC:-32}
GAMES=${GAMES:-256}
HINTS=${HINTS:-local}
SEED=${SEED:-1}
REDIS_PORT=${REDIS_PORT:-16389}
load=$after/shuangkou-load

tmp=$(mktemp -d)
pid=""
redis_pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/ports.sh"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
  >"$tmp/redis.log" 2>&1 &
redis_pid=$!
wait_port "$REDIS_PORT"
rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

run() { # name bin-dir store-spec
  local name=$1 bin=$2 spec=$3
  local port mport
  port=$(free_port)
  mport=$(free_port)
  rcli FLUSHALL >/dev/null
  rcli CONFIG RESETSTAT >/dev/null
  "$bin/shuangkou" serve --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
    --no-turn-timers --store "$spec" >"$tmp/server.log" 2>&1 &
  pid=$!
  wait_port "$port"
  local t0
  t0=$(cpu_ticks "$redis_pid")
  "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --server-pid "$pid" --json \
    --games "$GAMES" --concurrency "$CONC" --duration "$DURATION" --hints "$HINTS" \
    >"$out/$name.json" || true
  echo $(($(cpu_ticks "$redis_pid") - t0)) >"$out/$name.redis-ticks"
  rcli INFO commandstats >"$out/$name.commandstats"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

uptime | tee "$out/uptime-start.txt"
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for which in $order; do
    if [ "$which" = A ]; then bin=$before; else bin=$after; fi
    run "r$round-$which-memory" "$bin" memory
    run "r$round-$which-redis" "$bin" "redis://127.0.0.1:$REDIS_PORT/0"
  done
done
uptime | tee "$out/uptime-end.txt"

python3 - "$out" "$ROUNDS" "$(getconf CLK_TCK)" <<'EOF' | tee "$out/summary.txt"
import json, re, statistics, sys
out, rounds, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def run(name):
    r = json.load(open(f"{out}/{name}.json"))
    return r
def redis_costs(name, plays):
    ticks = int(open(f"{out}/{name}.redis-ticks").read())
    stats = {}
    for line in open(f"{out}/{name}.commandstats"):
        m = re.match(r"cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)", line)
        if m:
            stats[m[1]] = (int(m[2]), float(m[4]))
    return ticks * 1e6 / hz / max(plays, 1), stats
rows = {"A": [], "B": []}
for rnd in range(1, rounds + 1):
    for w in "AB":
        m = run(f"r{rnd}-{w}-memory")
        r = run(f"r{rnd}-{w}-redis")
        rcpu, stats = redis_costs(f"r{rnd}-{w}-redis", r["plays"])
        ratio = r["plays_per_second"] / m["plays_per_second"]
        rows[w].append((ratio, r["plays_per_second"], m["plays_per_second"],
                        r["cpu_us_per_play"]["server"], m["cpu_us_per_play"]["server"], rcpu))
        cmds = ", ".join(f"{k} {c / max(r['plays'], 1):.2f}/play @{u:.2f}µs"
                         for k, (c, u) in sorted(stats.items(), key=lambda kv: -kv[1][0])[:5])
        print(f"round {rnd} {w}: memory {m['plays_per_second']:.0f} plays/s (server {m['cpu_us_per_play']['server']} µs/play), "
              f"redis {r['plays_per_second']:.0f} plays/s (server {r['cpu_us_per_play']['server']} µs/play, "
              f"redis-server {rcpu:.1f} µs/play) = {ratio:.3f}x; ok {m['ok']}/{r['ok']}; {cmds}")
for w in "AB":
    col = list(zip(*rows[w]))
    med = [statistics.median(c) for c in col]
    print(f"{w} median: ratio {med[0]:.3f}x (range {min(col[0]):.3f}-{max(col[0]):.3f}), redis {med[1]:.0f} plays/s, "
          f"memory {med[2]:.0f} plays/s, server µs/play redis {med[3]:.1f} memory {med[4]:.1f}, redis-server µs/play {med[5]:.1f}")
pairs = [b[0] / a[0] for a, b in zip(rows["A"], rows["B"])]
print(f"B/A ratio of ratios per round: median {statistics.median(pairs):.3f} (range {min(pairs):.3f}-{max(pairs):.3f})")
EOF
