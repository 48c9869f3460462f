#!/bin/bash
# One file-mode cold start: process spawn → /readyz 200 of `convoy serve --from-dir WORLD`, no
# Envoys connected; prints wall time, the CPU time of all threads at ready (utime + stime from
# /proc), the peak RSS, and when the provider had loaded every file. CPUPROF=1 writes --cpu-prof
# files; SETTLE_S=N also prints the RSS N s after ready; ADMIN_PORT and XDS_PORT move the ports (default 19941, 18941) off another run's.
#   ROOT=<checkout with dist/> WORLD=<dir from world-files.js> drive.sh NODE OUTDIR [serve flags...]
NODE=$1; OUT=$2; shift 2
cd "${ROOT:?checkout}"
rm -rf "$OUT"; mkdir -p "$OUT"
PROFARGS=""
[ -n "$CPUPROF" ] && PROFARGS="--cpu-prof --cpu-prof-dir=$OUT"
ADMIN=${ADMIN_PORT:-19941}
t0=$(date +%s%N)
$NODE $PROFARGS dist/src/cli/main.js serve --from-dir "${WORLD:?world dir}" --from-dir-max-files 60000 \
  --insecure-plaintext-xds --no-managed-envoy --xds-address 127.0.0.1:${XDS_PORT:-18941} \
  --admin-address 127.0.0.1:$ADMIN --envoy-bind-address 127.0.0.1 "$@" > "$OUT/log.txt" 2>&1 &
pid=$!
while ! curl -sf -o /dev/null http://127.0.0.1:$ADMIN/readyz; do
  sleep 0.02
  if ! kill -0 $pid 2>/dev/null; then echo died; tail "$OUT/log.txt"; exit 1; fi
done
t1=$(date +%s%N)
read -a st < /proc/$pid/stat; tck=$(getconf CLK_TCK)
# Peak and current RSS at ready (VmHWM, VmRSS), MiB.
hwm=$(awk '/^VmHWM/ {print int($2/1024)}' /proc/$pid/status); rss=$(awk '/^VmRSS/ {print int($2/1024)}' /proc/$pid/status)
echo "start->ready $(( (t1-t0)/1000000 )) ms; cpu $(( (st[13]+st[14])*1000/tck )) ms; peak-rss $hwm MiB; rss $rss MiB"
# CPU by thread name at ready (threads that ended before, such as an idle worker, are not listed).
for t in /proc/$pid/task/*; do
  name=$(cat $t/comm 2>/dev/null); ticks=$(sed 's/.*) //' $t/stat 2>/dev/null | awk '{print $12+$13}')
  echo "$name:$ticks"
done | awk -F: -v tck=$tck '{ms[$1]+=$2*1000/tck} END {printf "threads"; for (n in ms) printf " %s=%d", n, ms[n]; print ""}' | tr ' ' ' '

lt=$(grep '"file provider started"' "$OUT/log.txt" | grep -o '"time":[0-9]*' | head -1 | cut -d: -f2)
echo "loaded $(( lt - t0/1000000 )) ms; $(grep -o '"cache":{[^}]*}' "$OUT/log.txt")"
# SETTLE_S=N: also the RSS N seconds after ready (the heap after the first collections since).
if [ -n "$SETTLE_S" ]; then
  sleep "$SETTLE_S"
  echo "rss-after-${SETTLE_S}s $(awk '/^VmRSS/ {print int($2/1024)}' /proc/$pid/status) MiB; peak-rss $(awk '/^VmHWM/ {print int($2/1024)}' /proc/$pid/status) MiB"
fi
kill -TERM $pid; wait $pid
