#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kubectl and etcd from the Go module proxy
# and caches them outside the repository, keyed by version and Go toolchain. A warm cache
# makes this a no-op; a cold one costs tens of minutes on 2 cores (measured: see README).
# Also fetches the Gateway API module so its standard CRDs can be applied.
# Prints the cache directory holding bin/ and crds/ on its last line.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.6.1}"
# The last release whose experimental channel ships the legacy XListenerSet CRD
# (docs/gateway-api.md §29); v1.5.0 replaced it by ListenerSet v1.
XLISTENERSET_RELEASE="${XLISTENERSET_RELEASE:-v1.4.1}"
GO_VERSION="$(go env GOVERSION)"
CACHE_ROOT="${CONVOY_CACHE:-$HOME/.cache/convoy}"
OUT="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-$GO_VERSION"
export GOTOOLCHAIN=local GOFLAGS=-modcacherw CGO_ENABLED=0

log() { echo "[build-binaries] $*" >&2; }

mkdir -p "$OUT/bin" "$OUT/src"

build_k8s() {
  if [[ -x "$OUT/bin/kube-apiserver" && -x "$OUT/bin/kube-controller-manager" && -x "$OUT/bin/kubectl" ]]; then
    return
  fi
  local dir="$OUT/src/k8s" start=$SECONDS
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  log "resolving k8s.io/kubernetes@$K8S_VERSION"
  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')"
  local staging="v0.${K8S_VERSION#v1.}"
  {
    echo "module convoy.local/k8sbins"
    echo
    echo "go 1.25.0"
    echo
    echo "godebug default=go1.25"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    go mod edit -json "$gomod" | python3 -c '
import json,sys
for r in json.load(sys.stdin)["Require"]:
    if r["Version"] == "v0.0.0":
        print(r["Path"])' | while read -r m; do echo "	$m => $m $staging"; done
    echo ")"
  } >go.mod
  cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  log "go mod tidy (k8s)"
  go mod tidy >&2
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=35 -X $p.gitTreeState=clean -X $p.gitCommit=unknown -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  log "building kube-apiserver, kube-controller-manager, kubectl"
  go build -trimpath -tags=notest,grpcnotrace -ldflags="$ld" -o "$OUT/bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl >&2
  log "k8s binaries built in $((SECONDS - start)) s"
  echo "$((SECONDS - start))" >"$OUT/k8s-build-seconds"
}

build_etcd() {
  if [[ -x "$OUT/bin/etcd" ]]; then return; fi
  local dir="$OUT/src/etcd" start=$SECONDS
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  cat >go.mod <<MOD
module convoy.local/etcdbin

go 1.25.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  log "go mod tidy (etcd)"
  go mod tidy >&2
  log "building etcd"
  go build -trimpath -ldflags="-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" -o "$OUT/bin/etcd" go.etcd.io/etcd/server/v3 >&2
  log "etcd built in $((SECONDS - start)) s"
  echo "$((SECONDS - start))" >"$OUT/etcd-build-seconds"
}

fetch_crds() {
  if [[ -f "$OUT/crds/.complete-$GATEWAY_API_VERSION" && -f "$OUT/crds-experimental/.complete-$GATEWAY_API_VERSION" ]]; then
    return
  fi
  local dir
  dir="$(go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  rm -rf "$OUT/crds" && mkdir -p "$OUT/crds"
  cp "$dir"/config/crd/standard/*.yaml "$OUT/crds/"
  chmod -R u+w "$OUT/crds"
  touch "$OUT/crds/.complete-$GATEWAY_API_VERSION"
  # The experimental channel, for the conformance run of experimental features (e.g. HTTPRoute
  # retry): the same CRDs with their experimental fields, plus the x-k8s.io kinds.
  rm -rf "$OUT/crds-experimental" && mkdir -p "$OUT/crds-experimental"
  cp "$dir"/config/crd/experimental/gateway.networking.*.yaml "$OUT/crds-experimental/"
  chmod -R u+w "$OUT/crds-experimental"
  touch "$OUT/crds-experimental/.complete-$GATEWAY_API_VERSION"
}

# The legacy XListenerSet CRD, into crds-legacy/ (installed only by the tests of that kind).
fetch_legacy_crds() {
  if [[ -f "$OUT/crds-legacy/.complete-$XLISTENERSET_RELEASE" ]]; then
    return
  fi
  local dir
  dir="$(go mod download -json "sigs.k8s.io/gateway-api@$XLISTENERSET_RELEASE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  rm -rf "$OUT/crds-legacy" && mkdir -p "$OUT/crds-legacy"
  cp "$dir"/config/crd/experimental/gateway.networking.x-k8s.io_xlistenersets.yaml "$OUT/crds-legacy/"
  chmod -R u+w "$OUT/crds-legacy"
  touch "$OUT/crds-legacy/.complete-$XLISTENERSET_RELEASE"
}

case "${1:-all}" in
  crds) fetch_crds; fetch_legacy_crds ;;
  etcd) build_etcd ;;
  k8s) build_k8s ;;
  all) fetch_crds; fetch_legacy_crds; build_etcd; build_k8s ;;
esac
echo "$OUT"
