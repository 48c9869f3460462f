#!/usr/bin/env bash
# Creates, or renews, the xDS mTLS Secrets that deploy/ mounts (docs/security.md):
#   convoy-system/convoy-xds-server          Convoy's serving certificate + the client CA (tls.crt, tls.key, ca.crt)
#   convoy-system/convoy-gateway-xds-client  the client certificate of Gateway convoy-system/convoy-gateway's Envoys
# with `convoy certgen` into a local folder that keeps the CA key (default ./xds-pki; keep it safe,
# never in the cluster next to the Envoys). Idempotent: run it again, e.g. daily, to renew the
# certificates before they expire (clients: 7 days); Convoy and Envoy reload the updated Secrets
# without restarting. Needs kubectl and either the convoy CLI or this repository built.
#   deploy/xds-certs.sh [PKI_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PKI="${1:-./xds-pki}"
read -r -a CONVOY <<<"${CONVOY:-node $HERE/../dist/src/cli/main.js}"
KUBECTL=(${KUBECTL:-kubectl})
NS=convoy-system

"${CONVOY[@]}" certgen --certs-dir "$PKI" \
  --server-name convoy-xds.convoy-system.svc --server-name convoy-xds.convoy-system.svc.cluster.local \
  --gateway convoy-system/convoy-gateway

apply_secret() { # name, folder
  "${KUBECTL[@]}" -n "$NS" create secret generic "$1" \
    --from-file=tls.crt="$2/tls.crt" --from-file=tls.key="$2/tls.key" --from-file=ca.crt="$2/ca.crt" \
    --dry-run=client -o yaml | "${KUBECTL[@]}" apply -f -
}
apply_secret convoy-xds-server "$PKI/server"
apply_secret convoy-gateway-xds-client "$PKI/gateways/convoy-system/convoy-gateway"
