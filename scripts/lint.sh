#!/usr/bin/env bash
# Static checks: ESLint, Prettier and the TypeScript type check. Exits non-zero if any fails,
# after running all three so one run shows every problem.
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
run npx --no-install prettier --check .
run npx --no-install tsc -p tsconfig.json --noEmit
exit $status
