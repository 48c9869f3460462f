#!/usr/bin/env python3
"""Median over runs (range) of each run's median of 3 changes: event-loop max, first simulated
Envoy (snapshot) and real Envoy served, per kind, and the idle 3 s window; base against branch."""
import glob, json, statistics as st, os
here = os.path.dirname(os.path.abspath(__file__))
def fig(side):
    runs = []
    for f in sorted(glob.glob(f'{here}/e2e-{side}-*.json')):
        d = json.load(open(f)); r = d['runs'][0]
        per = {}
        for c in r['changes']:
            per.setdefault(c['kind'], {'loop': [], 'snap': [], 'served': []})
            per[c['kind']]['loop'].append(c['eventLoopMaxMs']); per[c['kind']]['snap'].append(c['snapshotMs']); per[c['kind']]['served'].append(c['servedMs'])
        runs.append(({k: {m: st.median(v) for m, v in x.items()} for k, x in per.items()}, r['steadyEventLoopMaxMs']))
    return runs
out = []
for side in ['base', 'branch']:
    runs = fig(side)
    if not runs: continue
    out.append(f'{side}: {len(runs)} runs')
    for k in runs[0][0]:
        for m in ['loop', 'snap', 'served']:
            xs = [r[0][k][m] for r in runs]
            out.append(f'  {k:10s} {m:7s} median {st.median(xs):7.0f}  range {min(xs):.0f}-{max(xs):.0f}  runs {[round(x) for x in xs]}')
    xs = [r[1] for r in runs]
    out.append(f'  idle 3 s   loop    median {st.median(xs):7.0f}  range {min(xs):.0f}-{max(xs):.0f}  runs {[round(x) for x in xs]}')
print('\n'.join(out))
