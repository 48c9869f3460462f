#!/usr/bin/env bash
# Static checks: ESLint, the dependency rule for src/ (scripts/check-layers.js), Prettier and the
# TypeScript type check. Exits non-zero if any fails, after running all four so one run shows
# every problem.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
run() {
  echo "--- lint: $*"
  if ! "$@"; then
    echo "--- lint FAILED: $*" >&2
    status=1
  fi
}
run npx --no-install eslint .
run node scripts/check-layers.js
run npx --no-install prettier --check .
run npx --no-install tsc -p tsconfig.json --noEmit
exit $status
