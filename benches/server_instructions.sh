#!/usr/bin/env bash
# Server instructions per SubmitPlay, counted by callgrind: a figure that does not depend on what
# else the machine runs (BENCHMARKS.md, "Service per store", and the load generator's A/B of
# issue 13). Unlike CPU time or plays/s it is the same for the same binaries and workload.
#
#   benches/server_instructions.sh OUT SERVER_DIR [SERVER_DIR…]
#
# For each server directory (holding a release `shuangkou`), the server runs under
# `valgrind --tool=callgrind` on the memory store, and one load generator (LOAD, default the
# first directory's `shuangkou-load`) plays DEALS_SMALL and then, against a fresh server,
# DEALS_LARGE one-deal games (baibian, local hints, seeded). The figure is the difference of the
# two runs' instruction totals divided by the difference of their SubmitPlays, so start-up,
# script compilation and shutdown cancel out. Every game is verified by the load generator (a
# replay whose variant script is another version than the client's embedded one is reported,
# not counted as a failure: an old server against a new client, or the reverse).
# Environment: DEALS_SMALL (default 40), DEALS_LARGE (default 200), LOAD, SEED (default 1),
# LOAD_FLAGS (more load-generator flags, e.g. `--send-seat` for a new client against an old
# server), SERVER_FLAGS (more `serve` flags, e.g. `--no-web` where the server has a web table).
set -euo pipefail
out=${1:?usage: server_instructions.sh OUT SERVER_DIR [SERVER_DIR…]}
shift
[ $# -ge 1 ] || { echo "give at least one server directory" >&2; exit 2; }
mkdir -p "$out"
DEALS_SMALL=${DEALS_SMALL:-40}
DEALS_LARGE=${DEALS_LARGE:-200}
SEED=${SEED:-1}
LOAD=${LOAD:-$1/shuangkou-load}
read -r -a server_flags <<<"${SERVER_FLAGS:-}"
read -r -a load_flags <<<"${LOAD_FLAGS:-}"

pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; true; }
trap cleanup EXIT

. "$(dirname "$0")/ports.sh"

# run DIR DEALS NAME: one server under callgrind, one load run; prints "instructions plays".
run() {
  local dir=$1 deals=$2 name=$3 port
  port=$(free_port)
  valgrind --tool=callgrind --callgrind-out-file="$out/$name.callgrind" \
    "$dir/shuangkou" serve --listen "127.0.0.1:$port" --store memory --no-turn-timers \
    --no-metrics --drain-delay-seconds 0 --drain-seconds 5 "${server_flags[@]}" \
    >"$out/$name.server.log" 2>&1 &
  pid=$!
  local tries=0
  until python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "server $name did not open port $port" >&2; cat "$out/$name.server.log" >&2; exit 1
    fi
    sleep 0.2
  done
  timeout 1800 "$LOAD" --target "127.0.0.1:$port" --variant baibian --seed "$SEED" --games 8 \
    --concurrency 8 --hints local --deals "$deals" --baseline-secs 0 --json "${load_flags[@]}" \
    >"$out/$name.json" || true # judged below: replays of another script version fail the client's check
  kill -TERM "$pid"
  timeout 300 tail --pid="$pid" -f /dev/null || { echo "server $name did not stop" >&2; exit 1; }
  wait "$pid" 2>/dev/null || true
  pid=""
  python3 - "$out/$name.callgrind" "$out/$name.json" <<'PY'
import json, sys
total = None
for line in open(sys.argv[1]):
    if line.startswith(("summary:", "totals:")):
        total = int(line.split()[1])
r = json.load(open(sys.argv[2]))
assert not r["errors"] and r["games_failed"] == 0 and r["desyncs"] == 0, f"load run failed: {r['errors']}"
# A replay that differs only by the variant script's version (an older server's embedded
# script) is not a failed game; any other mismatch is.
bad = [m for m in r["mismatches"] if "is not the embedded" not in m]
assert not bad, f"replays not verified: {bad[:3]}"
print(total, r["plays"])
PY
}

for dir in "$@"; do
  tag=$(basename "$dir")
  run "$dir" "$DEALS_SMALL" "$tag-small" >"$out/$tag-small.count"
  run "$dir" "$DEALS_LARGE" "$tag-large" >"$out/$tag-large.count"
  read -r i1 p1 <"$out/$tag-small.count"
  read -r i2 p2 <"$out/$tag-large.count"
  python3 -c "
i1, p1, i2, p2 = $i1, $p1, $i2, $p2
print(f'$tag: {(i2 - i1) / (p2 - p1):,.0f} server instructions per SubmitPlay ({p1} and {p2} plays; totals {i1:,} and {i2:,})')
" | tee -a "$out/summary.txt"
done
