#!/usr/bin/env bash
# Issue 21's service measurements (BENCHMARKS.md, "Long matches"), against release binaries:
#
#   benches/long_games.sh [timers|match|streams|all] [out-dir]
#
# timers: for each store (memory, embedded in a temporary directory, Redis on a private loopback
#         redis-server), a server with turn timers on and `examples/timer_lateness`: TIMER_GAMES
#         (default 10000) games at turn_seconds = 5 left to time out for TIMER_WAIT s (default 30),
#         the lateness of every automatic play read from the replays;
# match:  `examples/match_latency` over one MATCH_DEALS-deal match (default 1000) on the memory
#         store: SubmitPlay p50 by deal number.
# all:    timers and match (not streams).
# streams: for the memory and the embedded store, `examples/unread_streams`: one STREAMS_DEALS-deal
#         bot match (default 500) played by the server, then the server's VmRSS with no stream, with
#         STREAMS (default 50) unread WatchGame streams from seq 0 held STREAMS_HOLD s (default 20),
#         and after they close, and the events/s of one stream from seq 0 read to its end;
#         STREAMS_WINDOW_KB sets the client's stream window (default hyper's); STREAMS_BEFORE=PATH
#         runs the same against that server binary first, for each store (before/after side by
#         side in one run; the outputs are streams-STORE-before.txt and streams-STORE.txt).
# Each run writes its output to the out-dir (default target/bench-long) and prints its JSON line.
# Environment: BIN (default target/release), REDIS_PORT (default 16380).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
out=${2:-target/bench-long}
mkdir -p "$out"
BIN=${BIN:-target/release}
REDIS_PORT=${REDIS_PORT:-16380}
TIMER_GAMES=${TIMER_GAMES:-10000}
TIMER_WAIT=${TIMER_WAIT:-30}
MATCH_DEALS=${MATCH_DEALS:-1000}
STREAMS_DEALS=${STREAMS_DEALS:-500}
STREAMS=${STREAMS:-50}
STREAMS_HOLD=${STREAMS_HOLD:-20}
STREAMS_WINDOW_KB=${STREAMS_WINDOW_KB:-}
KEY=bench-admin-key-0123456789abcdef
# The binaries the chosen measurement needs.
case $what in
  timers) needs="shuangkou examples/timer_lateness" ;;
  match) needs="shuangkou examples/match_latency" ;;
  streams) needs="shuangkou examples/unread_streams" ;;
  *) needs="shuangkou examples/timer_lateness examples/match_latency" ;;
esac
for exe in $needs; do
  [ -x "$BIN/$exe" ] || { echo "$BIN/$exe is missing: cargo build --release --bin shuangkou --example timer_lateness --example match_latency" >&2; exit 2; }
done

tmp=$(mktemp -d)
pid=""
redis_pid=""
# Ends the server and redis-server this script started (by their pids), then removes its files.
trap 'for p in $pid $redis_pid; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SERVER=$BIN/shuangkou
serve() { # store-spec extra-flags...
  local spec=$1
  shift
  SHUANGKOU_ADMIN_KEY=$KEY timeout 900 "$SERVER" serve --listen "127.0.0.1:$port" \
    --no-metrics --no-web --store "$spec" "$@" >"$tmp/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the server did not open its port" >&2
  cat "$tmp/server.log" >&2
  return 1
}
stop() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

if [ "$what" = timers ] || [ "$what" = all ]; then
  timeout 1800 redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$tmp" >"$tmp/redis.log" 2>&1 &
  redis_pid=$!
  for store in memory embedded redis; do
    case $store in
      memory) spec=memory ;;
      embedded) spec=$tmp/data ;;
      redis) spec=redis://127.0.0.1:$REDIS_PORT/0 ;;
    esac
    serve "$spec"
    echo "timers $store: load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/timers-$store.txt"
    # The server's own pid (the child of `timeout`), whose CPU the example reads.
    server_pid=$(pgrep -P "$pid" -x shuangkou || echo "$pid")
    "$BIN/examples/timer_lateness" "127.0.0.1:$port" "$KEY" "$TIMER_GAMES" "$TIMER_WAIT" "$server_pid" |
      tee -a "$out/timers-$store.txt"
    stop
  done
fi

if [ "$what" = match ] || [ "$what" = all ]; then
  serve memory --no-turn-timers
  echo "match: load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/match.txt"
  "$BIN/examples/match_latency" "127.0.0.1:$port" "$MATCH_DEALS" 21 | tee -a "$out/match.txt"
  echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/match.txt"
  stop
fi

if [ "$what" = streams ]; then
  for store in memory embedded; do
    for server in ${STREAMS_BEFORE:+before} after; do
      case $server in
        before) SERVER=$STREAMS_BEFORE suffix=-before ;;
        after) SERVER=$BIN/shuangkou suffix="" ;;
      esac
      case $store in
        memory) spec=memory ;;
        embedded) rm -rf "$tmp/data"; spec=$tmp/data ;;
      esac
      serve "$spec" --no-turn-timers --max-watch-streams-per-token "$((STREAMS + 2))"
      echo "streams $store ($SERVER): load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/streams-$store$suffix.txt"
      server_pid=$(pgrep -P "$pid" -x shuangkou || echo "$pid")
      "$BIN/examples/unread_streams" "127.0.0.1:$port" "$KEY" "$server_pid" "$STREAMS_DEALS" "$STREAMS" \
        "$STREAMS_HOLD" 900 $STREAMS_WINDOW_KB | tee -a "$out/streams-$store$suffix.txt"
      stop
    done
  done
fi
