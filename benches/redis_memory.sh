#!/usr/bin/env bash
# Redis memory per game, two server builds side by side (BENCHMARKS.md, "Redis memory and
# capacity"): per finished 8-deal match (kept for the retention) and per game in progress.
#
#   benches/redis_memory.sh BEFORE_BIN AFTER_BIN [out-dir]
#
# BEFORE_BIN and AFTER_BIN are directories holding `shuangkou` and `shuangkou-load` (any
# profile: Redis's memory does not depend on the client's build). For each build in turn, on a
# fresh private redis-server (no persistence) and a fresh server on it:
# - `finished`: MATCHES whole matches of 8 deals played by the load generator to their end and
#   verified (`--deals MATCHES*8 --deals-per-game 8 --games MATCHES`); used_memory's growth
#   divided by the matches;
# - `in progress`: GAMES games of 8-deal matches created and played PLAYS plays each
#   (`--populate`), left in progress; used_memory's growth divided by the games.
# `MEMORY USAGE` of one finished game's keys is printed beside. Environment: MATCHES (default
# 64), GAMES (default 200), PLAYS (default 560, mid-match of an 8-deal baibian match), SEED
# (default 1), MODES (default "finished progress").
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?before binaries}
after=${2:?after binaries}
out=${3:-target/bench-redis-memory}
mkdir -p "$out"
MATCHES=${MATCHES:-64}
GAMES=${GAMES:-200}
PLAYS=${PLAYS:-560}
SEED=${SEED:-1}

. "$(dirname "$0")/ports.sh"

tmp=$(mktemp -d)
pid=""
redis_pid=""
stop_all() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  pid=""
  redis_pid=""
}
trap 'stop_all; rm -rf "$tmp"' EXIT

used() { redis-cli -p "$rport" INFO memory | awk -F: '/^used_memory:/ {print $2+0}'; }

side() { # name bin-dir mode
  local name=$1 bin=$2 mode=$3 port
  rport=$(free_port)
  port=$(free_port)
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
    >"$tmp/redis.log" 2>&1 &
  redis_pid=$!
  wait_port "$rport"
  "$bin/shuangkou" serve --listen "127.0.0.1:$port" --no-metrics --no-web --no-turn-timers \
    --store "redis://127.0.0.1:$rport/0" >"$out/$name-$mode-server.log" 2>&1 &
  pid=$!
  wait_port "$port" 600 "$pid"
  local base
  base=$(used)
  if [ "$mode" = finished ]; then
    "$bin/shuangkou-load" --target "127.0.0.1:$port" --games "$MATCHES" --concurrency 16 \
      --deals $((MATCHES * 8)) --deals-per-game 8 --hints local --seed "$SEED" --json \
      >"$out/$name-$mode.json"
    local n=$MATCHES
  else
    "$bin/shuangkou-load" --target "127.0.0.1:$port" --populate "$GAMES" \
      --plays-per-game "$PLAYS" --deals-per-game 8 --concurrency 16 --hints local \
      --seed "$SEED" --json \
      >"$out/$name-$mode.json"
    local n=$GAMES
  fi
  local grown keys sample
  grown=$(( $(used) - base ))
  keys=$(redis-cli -p "$rport" DBSIZE)
  sample=$(redis-cli -p "$rport" --scan --pattern '*game:*' | head -1)
  printf '%s %s: %d games, used_memory +%d B, %d B per game, %d keys; MEMORY USAGE %s = %s B\n' \
    "$name" "$mode" "$n" "$grown" $((grown / n)) "$keys" "$sample" \
    "$(redis-cli -p "$rport" MEMORY USAGE "$sample")" | tee -a "$out/summary.txt"
  stop_all
}

for mode in ${MODES:-finished progress}; do
  side before "$before" "$mode"
  side after "$after" "$mode"
done
