#!/usr/bin/env bash
# Service load and memory benchmarks (BENCHMARKS.md, "Service load" and "Memory").
#
#   benches/service_load.sh [load|rate|memory|recovery|compaction|midmatch|all] [out-dir]
#
# load:   for each store (memory, embedded in a temporary directory, Redis on a private
#         loopback redis-server), a closed-loop run with server hints and one with local hints,
#         each with its own health-check baseline (same run, same concurrency, same connections);
# rate:   the local-hints run again at 80% of the peak measured by `load` (p99 at 80% of peak);
# memory: server RSS (VmRSS) with 10,000 then 100,000 games in progress (created and dealt,
#         4 plays each), memory and embedded stores;
# recovery: embedded store: RECOVERY_GAMES (default 100000) games in progress (4 plays each),
#         the data directory's bytes (and without the journal's zeros written ahead) and RSS,
#         then a restart: seconds until the port answers (the server recovers every
#         unfinished game before it listens) and RSS after;
# compaction: embedded store, COMPACT_SECS (default 60) of complete games (closed loop): journal
#         and archive sizes at the end, compactions logged, games completed;
# midmatch: embedded store, MID_GAMES (default 10000) games played MID_PLAYS (default 562)
#         SubmitPlays into an 8-deal match (deal 5 of 8): server VmRSS per game in progress.
# Every run writes its JSON to the out-dir (default target/bench-load) and a summary line.
# Environment: DURATION (s, default 20), CONC (default 32), GAMES (default 256), SEED (default 1),
# STORES (the stores `load` and `rate` run, default "memory embedded redis"),
# REDIS_PORT (default 16379), RECOVERY_GAMES, COMPACT_SECS, BIN (directory of the release binaries, default target/release),
# SERVER_FLAGS (more `serve` flags, e.g. `--finished-retention 30s` for the compaction run).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
out=${2:-target/bench-load}
mkdir -p "$out"
DURATION=${DURATION:-20}
CONC=${CONC:-32}
GAMES=${GAMES:-256}
SEED=${SEED:-1}
REDIS_PORT=${REDIS_PORT:-16379}
STORES=${STORES:-memory embedded redis}
BIN=${BIN:-target/release}
server=$BIN/shuangkou
load=$BIN/shuangkou-load
[ -x "$server" ] && [ -x "$load" ] || cargo build --release --bins --quiet

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

start_server() {
  port=$(free_port)
  mport=$(free_port)
  "$server" serve --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" --no-turn-timers \
    --store "$1" ${SERVER_FLAGS:-} >"$tmp/server.log" 2>&1 &
  pid=$!
  wait_port "$port" "${WAIT_TRIES:-200}"
}

stop_server() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$tmp" >"$tmp/redis.log" 2>&1 &
  redis_pid=$!
  wait_port "$REDIS_PORT"
}

store_spec() {
  case $1 in
    memory) echo memory ;;
    embedded) rm -rf "$tmp/data"; echo "$tmp/data" ;;
    redis) echo "redis://127.0.0.1:$REDIS_PORT/0" ;;
  esac
}

summary() {
  python3 - "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["rpcs"].get("SubmitPlay", {})
c = r["rpcs"].get("Health/Check", {})
print(f'{sys.argv[1]}: {r["plays_per_second"]:.0f} plays/s, SubmitPlay p50 {s.get("p50_us")} µs p99 {s.get("p99_us")} µs max {s.get("max_us")} µs; '
      f'baseline {r["baseline_checks_per_second"]:.0f}/s (p50 {c.get("p50_us")} p99 {c.get("p99_us")}); ratio {r["ratio_submit_to_baseline"]}; '
      f'errors {len(r["errors"])}, verified {r["verified"]}/{r["games_completed"]}, ok {r["ok"]}; '
      f'cpu µs/request server+client: check {r["cpu_us_per_check"]}, play {r["cpu_us_per_play"]}, cpu ratio {r["cpu_ratio_check_to_play"]}')
EOF
}

run_load() { # name args...
  local name=$1
  shift
  echo "+ shuangkou-load $*" >"$out/$name.cmd"
  "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --server-pid "$pid" --json "$@" \
    >"$out/$name.json" || true
  summary "$out/$name.json"
  # The store's metrics (the embedded store's commit phases) since the server started.
  curl -s "http://127.0.0.1:$mport/metrics" | grep '^shuangkou_store' >"$out/$name.metrics" || true
}

uses_redis() { case " $STORES " in *" redis "*) return 0 ;; *) return 1 ;; esac; }

if [ "$what" = load ] || [ "$what" = all ]; then
  if uses_redis; then start_redis; fi
  for store in $STORES; do
    start_server "$(store_spec $store)"
    run_load "$store-server-hints" --games "$GAMES" --concurrency "$CONC" --duration "$DURATION" --hints server
    run_load "$store-local-hints" --games "$GAMES" --concurrency "$CONC" --duration "$DURATION" --hints local
    stop_server
  done
fi

if [ "$what" = rate ] || [ "$what" = all ]; then
  if uses_redis && [ -z "$redis_pid" ]; then start_redis; fi
  for store in $STORES; do
    peak=$(python3 -c "import json; print(json.load(open('$out/$store-local-hints.json'))['plays_per_second'])")
    rate=$(python3 -c "print(round($peak * 0.8))")
    start_server "$(store_spec $store)"
    run_load "$store-rate80" --games "$GAMES" --concurrency "$CONC" --duration "$DURATION" --hints local --rate "$rate"
    stop_server
  done
fi

rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }

if [ "$what" = memory ] || [ "$what" = all ]; then
  for store in memory embedded; do
    start_server "$(store_spec $store)"
    base=$(rss)
    "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --json --populate 10000 \
      --plays-per-game 4 --concurrency 16 --hints local >"$out/mem-$store-10k.json"
    sleep 1
    r10=$(rss)
    "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --json --populate 90000 \
      --plays-per-game 4 --concurrency 16 --hints local >"$out/mem-$store-100k.json"
    sleep 1
    r100=$(rss)
    python3 - "$store" "$base" "$r10" "$r100" <<'EOF' | tee "$out/mem-$store.txt"
import sys
store, base, r10, r100 = sys.argv[1], *map(int, sys.argv[2:])
print(f"{store}: VmRSS empty {base/1024:.1f} MiB, 10k games {r10/1024:.1f} MiB, 100k games {r100/1024:.1f} MiB; "
      f"per game {(r100-base)*1024/100000:.0f} B (100k), {(r100-r10)*1024/90000:.0f} B (marginal 10k→100k)")
EOF
    stop_server
  done
fi

# midmatch (see the top).
if [ "$what" = midmatch ]; then
  n=${MID_GAMES:-10000}
  plays=${MID_PLAYS:-562}
  start_server "$(store_spec embedded)"
  "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --json --populate 10 \
    --deals-per-game 8 --plays-per-game 20 --concurrency 8 --hints local >/dev/null
  sleep 1
  base=$(rss)
  "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --json --populate "$n" \
    --deals-per-game 8 --plays-per-game "$plays" --concurrency 16 --hints local \
    >"$out/midmatch-populate.json"
  sleep 2
  after=$(rss)
  python3 - "$n" "$plays" "$base" "$after" <<'EOF' | tee "$out/midmatch.txt"
import sys
n, plays, base, after = map(int, sys.argv[1:])
print(f"embedded, {n} games {plays} plays into an 8-deal match: VmRSS {base/1024:.1f} -> {after/1024:.1f} MiB, "
      f"{(after-base)*1024/n:,.0f} B per game")
EOF
  stop_server
fi

# Bytes of the data directory without the zeros each journal is written ahead with (up to
# `writer::PREALLOCATE`, 4 MiB past its data: a fixed amount, not a per-game cost).
journal_data_bytes() {
  python3 - "$1" <<'EOF'
import os, sys
total = 0
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(root, name)
        size = os.path.getsize(path)
        if name.endswith(".log"):
            with open(path, "rb") as f:
                end = size
                while end > 0:
                    start = max(0, end - (1 << 20))
                    f.seek(start)
                    chunk = f.read(end - start).rstrip(b"\0")
                    if chunk:
                        end = start + len(chunk)
                        break
                    end = start
                size = end
        total += size
print(total)
EOF
}

if [ "$what" = recovery ]; then
  n=${RECOVERY_GAMES:-100000}
  spec=$(store_spec embedded)
  start_server "$spec"
  "$load" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --json --populate "$n" \
    --plays-per-game 4 --concurrency 16 --hints local >"$out/recovery-populate.json"
  sleep 1
  before=$(rss)
  bytes=$(du -sb "$spec" | cut -f1)
  data=$(journal_data_bytes "$spec")
  ls -l "$spec" >"$out/recovery-files.txt"
  stop_server
  t0=$(date +%s.%N)
  WAIT_TRIES=6000 start_server "$spec"
  t1=$(date +%s.%N)
  sleep 1
  after=$(rss)
  grep -h "recovered unfinished games" "$tmp/server.log" | tail -1 >"$out/recovery-log.txt" || true
  cp "$tmp/server.log" "$out/recovery-server.log"
  python3 - "$n" "$before" "$after" "$bytes" "$t0" "$t1" "$data" <<'EOF' | tee "$out/recovery.txt"
import sys
n, before, after, size = map(int, sys.argv[1:5])
t0, t1 = map(float, sys.argv[5:7])
data = int(sys.argv[7])
print(f"embedded, {n} games in progress (4 plays each): data directory {size/1e6:.1f} MB = {size/n:.0f} B per game "
      f"(without the journal's zeros written ahead {data/1e6:.1f} MB = {data/n:.0f} B per game); "
      f"restart until the port answers {t1-t0:.2f} s; VmRSS before the restart {before/1024:.1f} MiB, after recovery {after/1024:.1f} MiB")
EOF
  stop_server
fi

if [ "$what" = compaction ]; then
  secs=${COMPACT_SECS:-60}
  spec=$(store_spec embedded)
  start_server "$spec"
  run_load "compaction" --games "$GAMES" --concurrency "$CONC" --duration "$secs" --hints local
  ls -l "$spec" | tee "$out/compaction-files.txt"
  grep -c "journal compacted" "$tmp/server.log" >"$out/compaction-count.txt" || true
  grep -h "journal compacted" "$tmp/server.log" >"$out/compaction-log.txt" || true
  python3 - "$out/compaction.json" "$spec" "$(cat "$out/compaction-count.txt")" <<'EOF' | tee "$out/compaction.txt"
import json, os, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2]
j = os.path.getsize(os.path.join(d, "shuangkou.log"))
a = os.path.getsize(os.path.join(d, "shuangkou.archive"))
g = r["games_completed"]
print(f"embedded, {r['plays_per_second']:.0f} plays/s for the run: {g} games completed; journal {j/1e6:.1f} MB, "
      f"archive {a/1e6:.1f} MB = {a/max(g,1):.0f} B per finished game; compactions {sys.argv[3]}")
EOF
  stop_server
fi
