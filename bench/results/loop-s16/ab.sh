#!/bin/bash
# A/B store-level: base (0856dfa) and branch alternated; calibration and load before each run.
set -u
OUT=${REPO:?checkout of the branch}/bench/results/loop-s16
N24=$(cd "$REPO" && bash scripts/node24.sh)
size=$1; runs=$2
for i in $(seq 1 $runs); do
  for side in base loop; do
    dir=${BRANCH_DIR:?built worktree of the branch}; [ $side = base ] && dir=${BASE_DIR:?built worktree of the base}
    cd $dir
    cal=$($N24 dist/bench/tools/calibrate.js 2>/dev/null | tail -1)
    echo "{\"size\":\"$size\",\"side\":\"$side\",\"run\":$i,\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"calibration\":$cal}" >> $OUT/calibration.jsonl
    BENCH_RUN_SUFFIX=-$side-run$i $N24 dist/bench/run.js --size $size --only b > $OUT/$size-$side-run$i.log 2>&1
    grep "incremental" $OUT/$size-$side-run$i.log | sed "s/^/$size $side $i /" >> $OUT/runs.log
    cp bench/results/$size-*-$side-run$i.json $OUT/ 2>/dev/null
  done
done
cal=$($N24 dist/bench/tools/calibrate.js 2>/dev/null | tail -1)
echo "{\"size\":\"$size\",\"side\":\"end\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"calibration\":$cal}" >> $OUT/calibration.jsonl
echo done >> $OUT/runs.log
