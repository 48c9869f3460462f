#!/usr/bin/env bash
# Quiet A/B of the launcher's --max-semi-space-size=16: rss-probe (200 delta Envoys, 30 s window)
# and cold start (drive.sh), with (L) and without (N) the launch option, alternated.
set -uo pipefail
cd "$(git rev-parse --show-toplevel)"
N24=$(bash scripts/node24.sh 2>/dev/null)
O=${OUT:-ab-semi}; mkdir -p $O
cal() { echo "{\"when\":\"$1\",\"at\":\"$(date -u +%H:%M:%S)\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"calibration\":$($N24 dist/bench/tools/calibrate.js 2>/dev/null | tail -1)}" >> $O/calibration.jsonl; }
cal before
for r in 1 2; do
  $N24 dist/bench/tools/rss-probe.js --size large --clients 200 --procs 2 --wait-ms 30000 --out $O/rss-L-$r.json > $O/rss-L-$r.out 2>&1
  $N24 dist/bench/tools/rss-probe.js --size large --clients 200 --procs 2 --wait-ms 30000 --no-launch-options --out $O/rss-N-$r.json > $O/rss-N-$r.out 2>&1
done
cal after-rss
for r in 1 2 3; do
  NODE_OPTIONS=--max-semi-space-size=16 WORLD=${WORLD:?large world from world-files.js} ROOT=$PWD SETTLE_S=10 bash bench/tools/cold-start/drive.sh $N24 $O/cold-L-$r > $O/cold-L-$r.out 2>&1
  WORLD=${WORLD:?large world from world-files.js} ROOT=$PWD SETTLE_S=10 bash bench/tools/cold-start/drive.sh $N24 $O/cold-N-$r > $O/cold-N-$r.out 2>&1
done
cal after-cold
echo done
