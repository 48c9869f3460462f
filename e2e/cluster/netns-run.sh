#!/usr/bin/env bash
# Runs a command inside Convoy's private e2e network world: a new network namespace (only lo,
# up) and a private mount namespace, holding a Linux bridge `cnv0` with 192.0.2.1/24 for the pod
# runner's pods (one nested network namespace per pod, e2e/cluster/pod-network.ts) and the
# load-balancer addresses of 198.51.100.0/24 (e2e/cluster/lb-controller.ts). Nothing is routed
# to the host's network: the namespace has no link to it. /run is a private tmpfs, so
# `ip netns` names live and die with the world. It is also a PID namespace whose first process
# is this script's inner shell: when the command ends (or is killed), the kernel kills every
# process left in the world, pods included. Needs root (the tests run as root).
#
#   bash e2e/cluster/netns-run.sh node --test dist/e2e/pod-runner.test.js
#
# Inside, CONVOY_PRIVATE_WORLD=1 is set; e2e/cluster/private-world.ts re-executes a test file
# through this script when it is not.
set -euo pipefail
if [[ "${CONVOY_PRIVATE_WORLD:-}" == 1 ]]; then exec "$@"; fi
if [[ $# -eq 0 ]]; then echo "usage: netns-run.sh COMMAND [ARGS...]" >&2; exit 2; fi
if [[ "$(id -u)" != 0 ]]; then echo "netns-run.sh: needs root (unshare --net --mount)" >&2; exit 1; fi
export CONVOY_PRIVATE_WORLD=1
exec unshare --net --mount --pid --fork --mount-proc -- bash -euo pipefail -c '
  mount --make-rprivate /
  mount -t tmpfs -o mode=755 convoy-run /run
  mkdir -p /run/netns
  ip link set lo up
  ip link add cnv0 type bridge
  ip addr add 192.0.2.1/24 dev cnv0
  ip link set cnv0 up
  rc=0
  "$@" || rc=$?
  exit "$rc"
' netns-run "$@"
