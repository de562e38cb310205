#!/usr/bin/env sh
# Sets up a fresh checkout: strace (the durability test traces the server's sync calls with it;
# Debian package `strace`) when it is missing, then the npm packages from the lockfile.
set -eu
cd "$(dirname "$0")/.."
if ! command -v strace >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace
  else
    echo "setup: strace is missing and cannot be installed here (not root, no sudo); the durability test needs it" >&2
  fi
fi
npm ci
