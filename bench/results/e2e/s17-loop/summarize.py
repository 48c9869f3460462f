#!/usr/bin/env python3
"""Per-side medians and ranges (over runs of each run's median of 3 changes) of the s17-loop A/B."""
import glob, json, os, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
ids = ['listenerset.snapshot', 'listenerset.build', 'listenerset.eventLoop', 'listenerset.served',
       'listenerset-removed.snapshot', 'listenerset-removed.build', 'listenerset-removed.eventLoop', 'listenerset-removed.served',
       'route.snapshot', 'route.build', 'route.eventLoop', 'route.served',
       'route-removed.snapshot', 'route-removed.build', 'route-removed.eventLoop', 'route-removed.served',
       'eventLoop.steady', 'cold.ready', 'rss.steady']
sides = {}
for side in ('base', 'branch'):
    runs = []
    for f in sorted(glob.glob(f'{d}/files-large-{side}-*.json')):
        j = json.load(open(f))
        runs.append({r['id']: r['spread']['median'] for r in j['summary']})
    sides[side] = runs
print(f"{'measurement':32} {'base median (range), n':30} {'branch median (range), n':30}")
for i in ids:
    row = f'{i:32}'
    for side in ('base', 'branch'):
        v = [r[i] for r in sides[side] if i in r and r[i] == r[i]]
        row += f" {statistics.median(v):8.0f} ({min(v):.0f}–{max(v):.0f}), {len(v):<10}" if v else f" {'-':30}"
    print(row)
