#!/usr/bin/env bash
# Runs the official Gateway API conformance suite (v1.6.1, with traffic) against Convoy's managed
# mode on a kind cluster: the same suite `npm run conformance` runs on the local cluster without
# Docker (e2e/conformance/README.md). Needs docker, kind, kubectl, go, and cloud-provider-kind on
# PATH (`go install sigs.k8s.io/cloud-provider-kind@latest`; it gives LoadBalancer Services their
# addresses). See e2e/kind/README.md.
#   KIND_CLUSTER   cluster name (default convoy-conformance); created if missing
#   KEEP_CLUSTER=1 keep the cluster afterwards
#   REPORT         where the report goes (default ./convoy-conformance-report.yaml)
#   RUN_TEST       run one test only (the suite's -run-test)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CLUSTER="${KIND_CLUSTER:-convoy-conformance}"
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.6.1}"
REPORT="${REPORT:-$PWD/convoy-conformance-report.yaml}"
IMAGE=convoy:dev
CLASS=convoy-managed
log() { echo "[kind-conformance] $*" >&2; }

# shellcheck source=e2e/kind/cluster.sh
source "$ROOT/e2e/kind/cluster.sh"
kind_require docker kind kubectl go cloud-provider-kind
kind_cluster_up

log "starting cloud-provider-kind (LoadBalancer addresses)"
cloud-provider-kind >"${TMPDIR:-/tmp}/cloud-provider-kind.log" 2>&1 &
BACKGROUND_PID=$!

# Experimental channel: Convoy claims features whose fields only that channel serves (HTTPRoute
# retry); the standard CRDs would prune them.
log "installing Gateway API $GATEWAY_API_VERSION experimental CRDs"
"${KUBECTL[@]}" apply --server-side -f \
  "https://github.com/kubernetes-sigs/gateway-api/releases/download/$GATEWAY_API_VERSION/experimental-install.yaml"
"${KUBECTL[@]}" wait --for=condition=Established --timeout=60s crd --all

log "building $IMAGE and loading it into kind"
docker build -t "$IMAGE" "$ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER"

log "installing Convoy in managed mode (deploy/ base, deploy/managed/)"
"${KUBECTL[@]}" apply -f "$ROOT/deploy/00-namespace.yaml" -f "$ROOT/deploy/01-rbac.yaml"
"${KUBECTL[@]}" apply -f "$ROOT/deploy/managed/"
"${KUBECTL[@]}" -n convoy-system rollout status deployment/convoy --timeout=180s
"${KUBECTL[@]}" wait --for=condition=Accepted --timeout=120s "gatewayclass/$CLASS"

features="$("${KUBECTL[@]}" get gatewayclass "$CLASS" -o jsonpath='{range .status.supportedFeatures[*]}{.name},{end}')"
log "the class claims: ${features%,}"

log "building the conformance suite (e2e/conformance/build.sh)"
suite_dir="$(bash "$ROOT/e2e/conformance/build.sh" | tail -n 1)"

log "running the suite; report in $REPORT"
args=(
  -test.run='^TestConformance$' -test.v -test.timeout=120m
  -gateway-class="$CLASS"
  -conformance-profiles=GATEWAY-HTTP,GATEWAY-TLS,GATEWAY-GRPC
  -report-output="$REPORT"
  -organization=convoy -project=convoy -url=unpublished
  -version="$(git -C "$ROOT" rev-parse --short=12 HEAD)" -contact='convoy maintainers'
)
[[ -n "${RUN_TEST:-}" ]] && args+=(-run-test="$RUN_TEST")
KUBECONFIG="$(mktemp)"
export KUBECONFIG
kind get kubeconfig --name "$CLUSTER" >"$KUBECONFIG"
"$suite_dir/gateway-conformance.test" "${args[@]}"
