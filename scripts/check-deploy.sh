#!/usr/bin/env bash
# Static checks of the deployment artifacts (no Docker daemon or cluster needed):
#   1. docker-compose.yml is valid (`docker-compose config -q`, or `docker compose config -q`);
#   2. deploy/21-envoy-bootstrap.yaml holds bootstrap/kubernetes/ as deploy/regenerate.sh writes it
#      (bootstrap/ itself is compared with `convoy bootstrap` by test/envoy/bootstrap-folder.test.ts).
# The server-side validation of deploy/ (kubectl apply --dry-run=server against a real API
# server with the Gateway API CRDs) is an e2e test: e2e/k8s-deploy.test.ts.
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v docker-compose >/dev/null 2>&1; then
  docker-compose config -q
elif docker compose version >/dev/null 2>&1; then
  docker compose config -q
else
  echo "check-deploy: neither docker-compose nor the docker compose plugin is installed" >&2
  echo "  (Debian: apt-get install -y docker-compose)" >&2
  exit 1
fi
echo "check-deploy: docker-compose.yml ok"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bash deploy/regenerate.sh "$tmp"
diff -u deploy/21-envoy-bootstrap.yaml "$tmp/21-envoy-bootstrap.yaml"
echo "check-deploy: the Envoy bootstrap ConfigMap is up to date"
