#!/bin/bash
# Alternating A/B cold starts (see drive.sh): BEFORE and AFTER are checkouts with dist/ built;
# prints one line per run, and the calibration before and after.
#   BEFORE=<checkout> AFTER=<checkout> WORLD=<dir> RUNS=4 series.sh > series.log
HERE=$(cd "$(dirname "$0")" && pwd)
N24=$(bash "$AFTER/scripts/node24.sh")
echo "calibration-before $(node "$AFTER/dist/bench/tools/calibrate.js" | grep -o '"calibrationMs":[0-9]*')"
for i in $(seq 1 "${RUNS:-4}"); do
  for v in before after; do
    if [ $v = before ]; then root=$BEFORE; else root=$AFTER; fi
    out=$(ROOT=$root "$HERE/drive.sh" "$N24" "${TMPDIR:-/tmp}/cold-start-$v-$i")
    echo "$v $i $(echo $out | tr '\n' ' ') load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "calibration-after $(node "$AFTER/dist/bench/tools/calibrate.js" | grep -o '"calibrationMs":[0-9]*')"
