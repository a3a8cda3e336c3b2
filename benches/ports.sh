# Loopback ports for the scripts that start a server: benches/*.sh, .ci/load and .ci/e2e source
# this file.

# free_port: prints a loopback TCP port that nothing listens on now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT [TRIES [PID]]: waits until PORT accepts a connection, trying every 50 ms
# (TRIES times, 200 by default: 10 s); gives up at once when process PID (if given) has exited.
wait_port() {
  local port=$1 tries=${2:-200} pid=${3:-}
  for _ in $(seq 1 "$tries"); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.05
  done
  echo "port $port did not open" >&2
  return 1
}
