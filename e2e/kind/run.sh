#!/usr/bin/env bash
# Deploys Convoy to a kind cluster and sends one request through it. Needs docker, kind, kubectl
# and internet access (images, Gateway API CRDs). See e2e/kind/README.md.
#   KIND_CLUSTER   cluster name (default convoy); created if missing
#   KEEP_CLUSTER=1 keep the cluster afterwards (default: delete it if this script created it)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CLUSTER="${KIND_CLUSTER:-convoy}"
GATEWAY_API_VERSION="${GATEWAY_API_VERSION:-v1.6.1}"
IMAGE=convoy:dev
log() { echo "[kind-e2e] $*" >&2; }

# shellcheck source=e2e/kind/cluster.sh
source "$ROOT/e2e/kind/cluster.sh"
kind_require docker kind kubectl curl
kind_cluster_up

log "installing Gateway API $GATEWAY_API_VERSION standard CRDs"
"${KUBECTL[@]}" apply --server-side -f \
  "https://github.com/kubernetes-sigs/gateway-api/releases/download/$GATEWAY_API_VERSION/standard-install.yaml"
"${KUBECTL[@]}" wait --for=condition=Established --timeout=60s crd --all

log "building $IMAGE and loading it into kind"
docker build -t "$IMAGE" "$ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER"

log "xDS mTLS Secrets (deploy/xds-certs.sh, convoy certgen run in the image)"
"${KUBECTL[@]}" apply -f "$ROOT/deploy/00-namespace.yaml"
PKI="$(mktemp -d)"
CONVOY="docker run --rm --user $(id -u):$(id -g) -v $PKI:$PKI $IMAGE" KUBECTL="${KUBECTL[*]}" \
  bash "$ROOT/deploy/xds-certs.sh" "$PKI/xds-pki"

log "applying deploy/"
"${KUBECTL[@]}" apply -f "$ROOT/deploy/"
"${KUBECTL[@]}" -n convoy-system rollout status deployment/convoy --timeout=180s

log "deploying the sample backend and an HTTPRoute"
"${KUBECTL[@]}" -n default create configmap echo-backend --from-file=server.js="$ROOT/examples/backend/server.js" \
  --dry-run=client -o yaml | "${KUBECTL[@]}" apply -f -
"${KUBECTL[@]}" apply -f "$ROOT/e2e/kind/smoke.yaml"
"${KUBECTL[@]}" -n default rollout status deployment/echo --timeout=180s

log "waiting for Convoy's status: GatewayClass Accepted, Gateway Programmed, HTTPRoute Accepted"
"${KUBECTL[@]}" wait --for=condition=Accepted --timeout=60s gatewayclass/convoy
"${KUBECTL[@]}" -n convoy-system wait --for=condition=Programmed --timeout=60s gateway/convoy-gateway
"${KUBECTL[@]}" -n default wait --timeout=60s httproute/echo \
  --for=jsonpath='{.status.parents[0].conditions[?(@.type=="Accepted")].status}'=True
"${KUBECTL[@]}" -n convoy-system rollout status deployment/convoy-gateway-envoy --timeout=180s

# kind has no LoadBalancer implementation by default: reach the Envoy Service by port-forward.
port=18080
"${KUBECTL[@]}" -n convoy-system port-forward service/convoy-gateway-envoy "$port:80" >/dev/null &
BACKGROUND_PID=$!
for i in $(seq 1 30); do
  if body="$(curl -fsS "http://127.0.0.1:$port/smoke")"; then
    if grep -q '"backend": *"kind-echo"' <<<"$body"; then
      log "OK: request through Envoy reached the backend"
      exit 0
    fi
    log "unexpected answer: $body"
    exit 1
  fi
  sleep 2
done
log "no answer through Envoy"
"${KUBECTL[@]}" -n convoy-system logs deployment/convoy --tail=50 || true
exit 1
