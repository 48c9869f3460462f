#!/usr/bin/env bash
# Session 17 "loop" A/B: base 4c6c2a9 and the branch alternated (A B A B A B), file mode, large,
# chains layout, the four kinds whose event-loop delay missed 20 ms; calibration and load around
# each run in calibration.jsonl. Usage: ab.sh BASE_WORKTREE BRANCH_WORKTREE OUT_DIR
set -u
base=$1 branch=$2 out=$3
mkdir -p "$out"
cal() { (cd "$base" && node dist/bench/tools/calibrate.js | tr -d '\n'; echo " $1 $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)") >> "$out/calibration.jsonl"; }
for i in 1 2 3; do
  for side in base branch; do
    dir=$base; [ "$side" = branch ] && dir=$branch
    cal "before $side-$i"
    (cd "$dir" && $(bash scripts/node24.sh) dist/bench/e2e.js --mode files --size large --runs 1 --repeats 3 \
      --clients 200 --procs 2 --kinds listenerset,listenerset-removed,route,route-removed \
      --out "$out/files-large-$side-$i.json" > "$out/files-large-$side-$i.log" 2>&1)
    cal "after $side-$i"
  done
done
