#!/usr/bin/env bash
# Builds the Gateway API v1.6.1 conformance test binary, echo-basic and dns-server (dns-server/main.go,
# the stand-in for the suite's coredns) from the Go module proxy, cached outside the repository
# keyed by version and Go toolchain. Prints the cache directory (holding gateway-conformance.test,
# echo-basic and dns-server) on its last line.
set -euo pipefail
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.6.1}"
GO_VERSION="$(go env GOVERSION)"
OUT="${CONVOY_CACHE:-$HOME/.cache/convoy}/gateway-conformance-$GATEWAY_API_VERSION-$GO_VERSION"
export GOTOOLCHAIN=local GOFLAGS=-modcacherw CGO_ENABLED=0
DNS_SRC="$(cd "$(dirname "$0")" && pwd)/dns-server/main.go"

# Runs a go command that reaches the module proxy, up to three times: a lookup of the proxy can
# fail for a moment (seen in a CI run), and what one attempt downloaded stays in the module cache.
with_retries() {
  local attempt
  for attempt in 1 2; do
    "$@" && return 0
    echo "build.sh: '$*' failed (attempt $attempt of 3), retrying in $((attempt * 10)) s" >&2
    sleep $((attempt * 10))
  done
  "$@"
}

# The stand-in for the suite's coredns image (dns-server/main.go), rebuilt when its source changes.
build_dns_server() {
  if [[ -x "$OUT/dns-server" ]] && cmp -s "$DNS_SRC" "$OUT/dns-src/main.go"; then return 0; fi
  mkdir -p "$OUT/dns-src"
  cp "$DNS_SRC" "$OUT/dns-src/main.go"
  (
    cd "$OUT/dns-src"
    printf 'module convoy.local/dnsserver\n\ngo 1.26.0\n\nrequire github.com/miekg/dns v1.1.73\n' >go.mod
    with_retries go mod tidy
    go build -trimpath -o "$OUT/dns-server" .
  ) >&2
}

if [[ -x "$OUT/gateway-conformance.test" && -x "$OUT/echo-basic" ]]; then
  build_dns_server
  echo "$OUT"
  exit 0
fi
mkdir -p "$OUT/src" && cd "$OUT/src"
start=$SECONDS
cat >go.mod <<MOD
module convoy.local/gwconformance

go 1.26.0

require (
	sigs.k8s.io/gateway-api $GATEWAY_API_VERSION
	sigs.k8s.io/gateway-api/conformance $GATEWAY_API_VERSION
)
MOD
cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/gateway-api/conformance"
	_ "sigs.k8s.io/gateway-api/conformance/echo-basic"
)
GO
with_retries go mod tidy >&2
with_retries go get -t "sigs.k8s.io/gateway-api/conformance@$GATEWAY_API_VERSION" >&2
go test -c -trimpath -o "$OUT/gateway-conformance.test" sigs.k8s.io/gateway-api/conformance >&2
go build -trimpath -o "$OUT/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic >&2
build_dns_server
echo "$((SECONDS - start))" >"$OUT/build-seconds"
echo "$OUT"
