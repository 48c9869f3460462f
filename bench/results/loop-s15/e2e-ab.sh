#!/bin/bash
set -u
OUT=${REPO:?checkout of the branch}/bench/results/e2e/s15-loop
N24=$(cd "$REPO" && bash scripts/node24.sh)
for spec in "$@"; do
  side=${spec%%:*}; i=${spec##*:}
  dir=${BRANCH_DIR:?built worktree of the branch}; [ $side = base ] && dir=${BASE_DIR:?built worktree of the base}
  cd $dir
  cal=$($N24 dist/bench/tools/calibrate.js 2>/dev/null | tail -1)
  echo "{\"side\":\"$side\",\"run\":$i,\"when\":\"before\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"calibration\":$cal}" >> $OUT/calibration.jsonl
  $N24 dist/bench/e2e.js --mode files --size large --runs 1 --repeats 3 --clients 200 --procs 2 --out $OUT/files-large-$side-$i.json > $OUT/files-large-$side-$i.log 2>&1
  echo "exit $?" >> $OUT/files-large-$side-$i.log
  cal=$($N24 dist/bench/tools/calibrate.js 2>/dev/null | tail -1)
  echo "{\"side\":\"$side\",\"run\":$i,\"when\":\"after\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"calibration\":$cal}" >> $OUT/calibration.jsonl
done
echo done >> $OUT/calibration.jsonl
