#!/usr/bin/env bash
# Generates self-signed certificates for the example HTTPS hostnames and writes them as
# kubernetes.io/tls Secrets into examples/certs/ (git-ignored: these are throwaway keys).
# Idempotent: existing certificates are kept.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/examples/certs"
mkdir -p "$OUT"
for host in blue.example.com green.example.com; do
  name="${host//./-}"
  file="$OUT/$name.yaml"
  [[ -f "$file" ]] && continue
  tmp="$(mktemp -d)"
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$host" \
    -addext "subjectAltName=DNS:$host" -keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null
  cat >"$file" <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $name
  namespace: default
type: kubernetes.io/tls
data:
  tls.crt: $(base64 -w0 "$tmp/tls.crt")
  tls.key: $(base64 -w0 "$tmp/tls.key")
YAML
  rm -rf "$tmp"
done
echo "$OUT"
