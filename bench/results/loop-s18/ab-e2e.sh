#!/bin/bash
# e2e A/B, file mode, large, chains: base 9266ddb and branch s18-loop alternated; calibration and
# load average before and after each run.
out=${BRANCH:?branch worktree}/bench/results/loop-s18
N24=$(bash ${BRANCH:?branch worktree}/scripts/node24.sh)
for i in 1 2 3; do
  for side in base branch; do
    dir=${BRANCH:?branch worktree}; [ $side = base ] && dir=${BASE:?base worktree}
    cd $dir
    echo "{\"run\":\"e2e-$side-$i\",\"at\":\"before\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"cal\":$(node dist/bench/tools/calibrate.js | tail -1)}" >> $out/calibration.jsonl
    $N24 dist/bench/e2e.js --mode files --size large --runs 1 --repeats 3 --clients 200 --procs 2 --kinds route,cert,endpoints --out $out/e2e-$side-$i.json > $out/e2e-$side-$i.log 2>&1
    echo "{\"run\":\"e2e-$side-$i\",\"at\":\"after\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"cal\":$(node dist/bench/tools/calibrate.js | tail -1)}" >> $out/calibration.jsonl
  done
done
