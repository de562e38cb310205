#!/usr/bin/env sh
# Sets up a fresh checkout: the Debian packages the tests call when they are missing, then the npm
# packages from the lockfile:
# - strace (the durability test traces the server's sync calls with it);
# - mosquitto-clients (mosquitto_pub / mosquitto_sub: an MQTT client that is not ours, for tests);
# - chromium (the explorer's browser tests drive Debian's chromium through playwright-core).
set -eu
cd "$(dirname "$0")/.."
missing=""
command -v strace >/dev/null 2>&1 || missing="$missing strace"
command -v mosquitto_pub >/dev/null 2>&1 && command -v mosquitto_sub >/dev/null 2>&1 || missing="$missing mosquitto-clients"
[ -x /usr/bin/chromium ] || missing="$missing chromium"
if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
  else
    echo "setup: missing Debian packages:$missing; they cannot be installed here (not root, no sudo); the tests that call them need them" >&2
  fi
fi
npm ci
