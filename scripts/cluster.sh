#!/usr/bin/env bash
# A cluster to try on one machine (docs/cluster.md): three nats-servers with JetStream and three
# engine nodes on loopback, each with its own folder under $CLUSTER_DIR (default ./cluster-data).
#   scripts/cluster.sh start   # build first: npm run build
#   scripts/cluster.sh stop    # stops exactly the processes it started (their pid files)
# Ports: nats 21601-21603 (routes 21611-21613); node N: HTTP 2162N, MQTT 2163N (21621.., 21631..).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${CLUSTER_DIR:-./cluster-data}"
NATS="${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}"
SERVERS='["nats://127.0.0.1:21601","nats://127.0.0.1:21602","nats://127.0.0.1:21603"]'

start() {
  [ -f dist/main.js ] || { echo "dist/main.js is missing: run npm run build" >&2; exit 1; }
  mkdir -p "$DIR"
  for i in 1 2 3; do
    mkdir -p "$DIR/n$i"
    routes="" # the other servers' (a server dialling itself only adds a route it drops)
    for j in 1 2 3; do [ "$j" = "$i" ] || routes+="${routes:+, }nats-route://127.0.0.1:2161$j"; done
    cat > "$DIR/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:2160$i
max_payload: 8MB
jetstream { store_dir: "$DIR/n$i" }
cluster { name: engine, listen: 127.0.0.1:2161$i, routes: [$routes] }
CONF
    : > "$DIR/n$i.log" # the wait below must not read an earlier run's log
    "$NATS" -c "$DIR/n$i.conf" > "$DIR/n$i.log" 2>&1 &
    echo $! > "$DIR/n$i.pid"
    # One after the other: nats-server 2.9 servers that dial each other at the same moment can
    # both drop the route, and one may then never join JetStream's meta group (docs/cluster.md).
    until grep -q 'Server is ready' "$DIR/n$i.log"; do
      kill -0 "$(cat "$DIR/n$i.pid")" 2>/dev/null || { echo "nats-server n$i exited: see $DIR/n$i.log" >&2; exit 1; }
      sleep 0.1
    done
  done
  for i in 1 2 3; do
    ENGINE_CONFIG=config/cluster.json ENGINE_CLUSTER_NODE_NAME="node$i" ENGINE_DATA_DIR="$DIR/node$i.data" \
    ENGINE_CLUSTER_NATS_SERVERS="$SERVERS" ENGINE_LISTENING_HOST=127.0.0.1 \
    ENGINE_LISTENING_HTTP_PORT="2162$i" ENGINE_LISTENING_HTTPS_PORT=null ENGINE_MQTT_PORT="2163$i" \
    ENGINE_MQTTS_PORT=null ENGINE_MQTT_WS_PORT=null ENGINE_MQTT_WSS_PORT=null \
      node dist/main.js > "$DIR/node$i.log" 2>&1 &
    echo $! > "$DIR/node$i.pid"
  done
  echo "started: REST http://127.0.0.1:2162{1,2,3}/engine/api/v1, MQTT mqtt://127.0.0.1:2163{1,2,3} (admin/ADMIN); logs in $DIR"
}

stop() {
  for name in node1 node2 node3 n1 n2 n3; do
    if [ -f "$DIR/$name.pid" ]; then
      pid=$(cat "$DIR/$name.pid")
      # Only the process this script started: a pid left by one that died may belong to another now.
      if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qxF "ENGINE_DATA_DIR=$DIR/$name.data" \
        || tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | grep -qxF "$DIR/$name.conf"; then
        kill "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
      fi
      rm -f "$DIR/$name.pid"
    fi
  done
  echo "stopped (data kept in $DIR)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
