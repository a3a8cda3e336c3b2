#!/usr/bin/env bash
# Several server binaries under the same load generator, in turn, round after round (BENCHMARKS.md,
# "The load generator before and after the service reshaping"): a closed loop (or a fixed rate)
# against `serve --store memory`, one summary line per run, the JSON in the out-dir.
#
#   benches/servers_side_by_side.sh LOAD_BIN OUT NAME=SERVER_BIN[,FLAG...] ...
#
#   e.g. benches/servers_side_by_side.sh /tmp/old/shuangkou-load /tmp/ab \
#          old=/tmp/old/shuangkou new=target/release/shuangkou,--no-web
#
# Environment: ROUNDS (default 3), DURATION (s, default 10), RATE (plays/s; default: closed loop),
# STORE (default memory). Each server gets `--no-metrics --no-turn-timers`; flags after a comma
# are added (the web listener's `--no-web` exists only on servers that have one). A load
# generator checks each finished game's replay against its own built-in variant scripts: against
# a server whose scripts differ it counts those games as mismatches (not errors) and verifies
# none, so the line gives errors, mismatches and verified games apart.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
load=$1 out=$2
shift 2
mkdir -p "$out"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
STORE=${STORE:-memory}
. "$(dirname "$0")/ports.sh"
for r in $(seq 1 "$ROUNDS"); do
  for side in "$@"; do
    name=${side%%=*} spec=${side#*=}
    IFS=, read -r -a parts <<<"$spec"
    port=$(free_port)
    "${parts[0]}" serve --listen "127.0.0.1:$port" --no-metrics --no-turn-timers --store "$STORE" \
      "${parts[@]:1}" >"$out/$name-$r.log" 2>&1 &
    pid=$!
    wait_port "$port" 200 "$pid"
    json="$out/$name-$r.json"
    timeout 300 "$load" --target "127.0.0.1:$port" --games 256 --concurrency 32 --connections 4 \
      --hints local --duration "$DURATION" --seed 1 ${RATE:+--rate "$RATE"} --server-pid "$pid" \
      --json >"$json" 2>"$out/$name-$r.stderr" || true
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    python3 - "$json" "$name" "$r" "$hwm" <<'PY'
import json, sys
path, name, r, hwm = sys.argv[1:5]
d = json.load(open(path))
s = d["rpcs"]["SubmitPlay"]
cpu = d["cpu_us_per_play"]
print(f"{name} round {r}: {d['plays_per_second']:.0f} plays/s, SubmitPlay p50 {s['p50_us']} µs "
      f"p99 {s['p99_us']} µs, server CPU {cpu['server']} µs/play (client {cpu['client']}), "
      f"errors {len(d['errors'])}, mismatches {len(d['mismatches'])}, games {d['games_completed']} "
      f"(verified {d['verified']}), peak RSS {int(hwm) // 1024} MiB")
PY
  done
done
