#!/usr/bin/env bash
# Builds Envoy Gateway's controller (github.com/envoyproxy/gateway/cmd/envoy-gateway) from the Go
# module proxy, unpatched, the way its Makefile does (CGO_ENABLED=0, version stamped by -ldflags),
# and caches it outside the repository keyed by version and Go toolchain, like
# e2e/cluster/build-binaries.sh does for the Kubernetes binaries. A warm cache makes this a no-op;
# a cold one downloads a few hundred modules and compiles for tens of minutes on 2 cores, so the
# compiler runs niced and one package at a time (it shares the machine).
# Also extracts the CRDs the release ships (charts/gateway-crds-helm, helm conditionals removed):
# crds/ holds Envoy Gateway's own gateway.envoyproxy.io kinds; the Gateway API CRDs come from the
# Gateway API release its go.mod names (printed into gateway-api-version).
# Prints the cache directory holding bin/envoy-gateway and crds/ on its last line.
set -euo pipefail

EG_VERSION="${EG_VERSION:-v1.9.1}"
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${CONVOY_CACHE:-$HOME/.cache/convoy}"
OUT="$CACHE_ROOT/envoy-gateway-$EG_VERSION-$GO_VERSION"
export GOTOOLCHAIN=local GOFLAGS="-modcacherw -buildvcs=false -p=${GO_BUILD_JOBS:-1}" CGO_ENABLED=0

log() { echo "[build-envoy-gateway] $*" >&2; }

mkdir -p "$OUT/bin"

module_dir() {
  go mod download -json "github.com/envoyproxy/gateway@$EG_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
}

build_controller() {
  if [[ -x "$OUT/bin/envoy-gateway" ]]; then return; fi
  local src="$OUT/src/gateway" start=$SECONDS
  # Build inside a copy of the released module so its own go.mod and go.sum pin every dependency.
  rm -rf "$src" && mkdir -p "$OUT/src"
  cp -r "$(module_dir)" "$src" && chmod -R u+w "$src"
  cd "$src"
  log "building envoy-gateway $EG_VERSION (GOFLAGS=$GOFLAGS)"
  nice -n 10 go build -trimpath \
    -ldflags="-s -w -X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=$EG_VERSION" \
    -o "$OUT/bin/envoy-gateway.tmp" ./cmd/envoy-gateway >&2
  mv "$OUT/bin/envoy-gateway.tmp" "$OUT/bin/envoy-gateway"
  log "envoy-gateway built in $((SECONDS - start)) s"
  echo "$((SECONDS - start))" >"$OUT/build-seconds"
}

extract_crds() {
  if [[ -f "$OUT/crds/.complete" ]]; then return; fi
  local dir
  dir="$(module_dir)"
  rm -rf "$OUT/crds" && mkdir -p "$OUT/crds"
  local f
  for f in "$dir"/charts/gateway-crds-helm/templates/generated/*.yaml; do
    grep -v '^{{' "$f" >"$OUT/crds/$(basename "$f")"
  done
  awk '$1 == "sigs.k8s.io/gateway-api" { print $2 }' "$dir/go.mod" >"$OUT/gateway-api-version"
  touch "$OUT/crds/.complete"
}

case "${1:-all}" in
  crds) extract_crds ;;
  all) extract_crds; build_controller ;;
esac
echo "$OUT"
