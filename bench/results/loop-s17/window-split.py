#!/usr/bin/env python3
"""Splits the serving thread's samples of an e2e --cpu-prof profile, per window of the run (seconds
from the profile's start: edit the windows to the run's log), into idle, garbage collector, the
per-stream frame copy (Buffer _copyActual, under ChunkedBody.copy from grpc-js's serializeMessage),
V8's (program) and everything else. Usage: window-split.py FILE.cpuprofile"""
import json, sys
p = json.load(open(sys.argv[1]))
nodes = {n['id']: n for n in p['nodes']}
wins = [(46, 64, 'ListenerSet added x3'), (64, 98, 'ListenerSet deleted x3'), (98, 130, 'route edited x3 + route deleted x3')]
acc = {w[2]: {} for w in wins}
t = 0
for s, dt in zip(p['samples'], p['timeDeltas']):
    t += dt
    for a, b, k in wins:
        if a <= t / 1e6 < b:
            fn = nodes[s]['callFrame']['functionName'] or '(anonymous)'
            key = fn if fn in ('(garbage collector)', '(idle)', '(program)', '_copyActual') else 'other'
            acc[k][key] = acc[k].get(key, 0) + dt / 1000
for k, v in acc.items():
    print(k + ': ' + ', '.join(f'{a} {b:.0f} ms' for a, b in sorted(v.items(), key=lambda x: -x[1])))
