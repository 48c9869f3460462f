#!/bin/bash
# A/B of one /metrics scrape's cost at large (bench/tools/scrape-cost.ts): base 9266ddb and
# branch s18-loop alternated, with calibration and load average before and after each run.
out=${BRANCH:?branch worktree}/bench/results/loop-s18
N24=$(bash ${BRANCH:?branch worktree}/scripts/node24.sh)
for i in 1 2 3; do
  for side in base branch; do
    dir=${BRANCH:?branch worktree}; [ $side = base ] && dir=${BASE:?base worktree}
    cd $dir
    echo "{\"run\":\"$side-$i\",\"at\":\"before\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"cal\":$(node dist/bench/tools/calibrate.js | tail -1)}" >> $out/calibration.jsonl
    $N24 dist/bench/tools/scrape-cost.js --rounds 6 --out $out/scrape-$side-$i.json > $out/scrape-$side-$i.log 2>&1
    echo "{\"run\":\"$side-$i\",\"at\":\"after\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"cal\":$(node dist/bench/tools/calibrate.js | tail -1)}" >> $out/calibration.jsonl
  done
done
