# Shared by e2e/kind/run.sh and e2e/kind/conformance.sh (sourced, not run): checks the tools a
# script needs, reuses or creates its kind cluster, and on exit stops the script's background
# helper and deletes the cluster if this script created it (unless KEEP_CLUSTER=1).
# The sourcing script sets CLUSTER and defines log() first; it may set BACKGROUND_PID later.

# kind_require TOOL... : exits with a message naming the first tool missing from PATH.
kind_require() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { log "$tool is required"; exit 1; }
  done
}

# kind_cluster_up: uses the cluster $CLUSTER if it exists, creates it otherwise, sets KUBECTL to a
# kubectl bound to it and installs the exit trap that cleans up.
kind_cluster_up() {
  KIND_CREATED=0
  if ! kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
    log "creating kind cluster $CLUSTER"
    kind create cluster --name "$CLUSTER" --wait 120s
    KIND_CREATED=1
  fi
  KUBECTL=(kubectl --context "kind-$CLUSTER")
  BACKGROUND_PID=""
  trap kind_cleanup EXIT
}

# kind_cleanup: the exit trap; stops BACKGROUND_PID (a port-forward or the load-balancer helper)
# and deletes the cluster when this script created it.
kind_cleanup() {
  [[ -n "${BACKGROUND_PID:-}" ]] && kill "$BACKGROUND_PID" 2>/dev/null || true
  if [[ "${KIND_CREATED:-0}" == 1 && "${KEEP_CLUSTER:-0}" != 1 ]]; then
    log "deleting kind cluster $CLUSTER"
    kind delete cluster --name "$CLUSTER"
  fi
}
