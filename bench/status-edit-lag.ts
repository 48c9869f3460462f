/**
 * Finds where a spec edit waits in Kubernetes mode while the cold start's statuses are being
 * written (issue 15; bench/README.md "Kubernetes mode, session 16"). The bench world is created
 * in a real kube-apiserver (e2e/cluster), `convoy serve` starts against it with debug logs, and
 * once it is ready, route edits and certificate rotations are made with the admin client, one at
 * a time. For each edit the bench records, in ms from the write's answer:
 *
 * - `filtered`: a watch of that one object (field selector on its name) sees the new version;
 * - `unfiltered`: a watch of the whole kind, like Convoy's informer, sees it;
 * - `convoy`: Convoy's informer handed it to the store ("watch change" in its debug log);
 * - `built`: the first build pass that ended after that (Convoy's log).
 *
 * A late `filtered` means the API server's watch cache is behind; `unfiltered` late and
 * `filtered` early means the stream of the whole kind is; `convoy` later than `unfiltered` means
 * Convoy's own reading is. The bench also counts the events per second on each unfiltered stream.
 *
 * Usage: node dist/bench/status-edit-lag.js [--size small|large] [--edits 6] [--gap-ms 4000]
 *   [--wait-ms 5000] [--writer-args "..."] [--out FILE.json]. Needs CONVOY_K8S_BIN_DIR and
 *   CONVOY_CRD_DIR like the e2e tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { LocalCluster } from '../e2e/cluster/cluster';
import type { ConvoyProcess } from '../e2e/harness';
import type { KubeClient, WatchEvent } from '../src/kubernetes/client';
import { collectionPath, objectPath, resourceForKind } from '../src/kubernetes/resources';
import type { KubeObject } from '../src/store/objects';
import { startConvoyOnCluster } from './e2e/kube-convoy';
import { createWorld, creatable } from './e2e/kube-world';
import { withRedirectRule } from './e2e/changes';
import { countCurrent, STATUS_KINDS, statusWrites } from './e2e/status-complete';
import { calibrationMs, gitShortRev, median, nowMs, sleep } from './common';
import { SIZES, World } from './world';

interface EditFigures {
  kind: string;
  object: string;
  resourceVersion: string;
  writeMs: number;
  filteredMs: number | null;
  unfilteredMs: number | null;
  convoyMs: number | null;
  builtMs: number | null;
  /** Statuses Convoy had written when the edit was made. */
  statusesWritten: number;
}

/** A watch of a collection from `resourceVersion` that records when each resourceVersion arrived. */
class SeenWatch {
  readonly seen = new Map<string, number>();
  events = 0;
  private readonly abort = new AbortController();
  private readonly done: Promise<void>;

  constructor(client: KubeClient, collection: string, resourceVersion: string, fieldSelector?: string) {
    this.done = client
      .watch(
        collection,
        (e: WatchEvent) => {
          this.events++;
          const rv = (e.object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
          if (rv && e.type !== 'BOOKMARK') this.seen.set(rv, nowMs());
        },
        { query: { resourceVersion, fieldSelector, timeoutSeconds: 3600 }, signal: this.abort.signal },
      )
      .catch(() => undefined);
  }

  /** Resolves with the time `rv` was seen, or null after `timeoutMs`. */
  async when(rv: string, timeoutMs: number): Promise<number | null> {
    const end = nowMs() + timeoutMs;
    while (nowMs() < end) {
      const t = this.seen.get(rv);
      if (t !== undefined) return t;
      await sleep(5);
    }
    return null;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

/** Returns the current resourceVersion of a collection (a LIST of one item). */
async function currentVersion(client: KubeClient, collection: string): Promise<string> {
  const page = await client.request<{ metadata: { resourceVersion: string } }>('GET', collection, {
    query: { limit: 1 },
  });
  return page.metadata.resourceVersion;
}

/** Times of Convoy's JSON log lines: "watch change" by resourceVersion, and build passes. */
function convoyTimes(log: string): { changes: Map<string, number>; passes: number[] } {
  const changes = new Map<string, number>();
  const passes: number[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    if (!line.includes('watch change') && !line.includes('build pass') && !line.includes('build finished'))
      continue;
    try {
      const e = JSON.parse(line) as { msg?: string; time?: number; resourceVersion?: string };
      if (typeof e.time !== 'number') continue;
      if (e.msg === 'watch change' && e.resourceVersion) changes.set(e.resourceVersion, e.time);
      else if (e.msg !== 'watch change') passes.push(e.time);
    } catch {
      // a cut line
    }
  }
  return { changes, passes: passes.sort((a, b) => a - b) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      edits: { type: 'string', default: '6' },
      'gap-ms': { type: 'string', default: '4000' },
      'wait-ms': { type: 'string', default: '5000' },
      'writer-args': { type: 'string', default: '' },
      out: { type: 'string' },
    },
  });
  const size = SIZES[values.size];
  if (!size) throw new Error(`unknown size ${values.size}`);
  const world = new World({ size });
  const calibrationBefore = calibrationMs();
  const cluster = await LocalCluster.start({});
  let convoy: ConvoyProcess | undefined;
  const watches: SeenWatch[] = [];
  const edits: EditFigures[] = [];
  try {
    await createWorld(cluster.admin, world.objects());
    // A route of no Gateway whose annotation the sampler below changes: Convoy drops the
    // annotation (trimObject), so each change is an event on the HTTPRoute stream and nothing else.
    const probePath = objectPath(resourceForKind('HTTPRoute')!, 'tenant-0', 'lag-probe');
    await cluster.admin.request('POST', collectionPath(resourceForKind('HTTPRoute')!, 'tenant-0'), {
      body: {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'lag-probe', namespace: 'tenant-0' },
        spec: { rules: [{}] },
      },
    });
    const extra = values['writer-args'] ? values['writer-args'].split(' ') : [];
    const started = nowMs();
    convoy = await startConvoyOnCluster(cluster, 'convoy-edit-lag', extra, { CONVOY_LOG_LEVEL: 'debug' });
    const readyMs = nowMs() - started;
    process.stdout.write(`ready after ${Math.round(readyMs)} ms\n`);
    const routes = resourceForKind('HTTPRoute')!;
    const secrets = resourceForKind('Secret')!;
    const byKind: Record<string, SeenWatch> = {};
    for (const r of [routes, secrets]) {
      const c = collectionPath(r);
      const w = new SeenWatch(cluster.admin, c, await currentVersion(cluster.admin, c), r.fieldSelector);
      watches.push(w);
      byKind[r.kind] = w;
    }
    // Every 500 ms until status is complete: the watch lag of one annotation change on the
    // HTTPRoute stream (from the PATCH's answer to the event on the unfiltered watch).
    const lagSamples: { atMs: number; lagMs: number | null; written: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      for (let n = 0; sampling; n++) {
        const answer = await cluster.admin.request<KubeObject>('PATCH', probePath, {
          body: { metadata: { annotations: { 'bench.convoy.dev/probe': String(n) } } },
          contentType: 'application/merge-patch+json',
        });
        const at = nowMs();
        const seen = await byKind.HTTPRoute!.when(answer.metadata.resourceVersion!, 60_000);
        const written = statusWrites((await convoy!.get('/metrics')).body).written ?? 0;
        lagSamples.push({
          atMs: Math.round(at - started),
          lagMs: seen === null ? null : Math.round(seen - at),
          written,
        });
        await sleep(500);
      }
    })();
    await sleep(Number(values['wait-ms']));
    const n = Number(values.edits);
    for (let k = 0; k < n; k++) {
      const isRoute = k % 2 === 0;
      const r = isRoute ? routes : secrets;
      let object: KubeObject;
      if (isRoute) {
        const i = (k * 7919 + 13) % size.routes;
        const edited = world.editRoute(i)[0]!;
        object = withRedirectRule(edited, `/lag-${k}`, `moved-${k}.bench.example.com`);
      } else {
        const i = (k * 104729 + 7) % size.listenerSets;
        object = world.rotateCertificate(i).objects[0]!;
      }
      const ns = object.metadata.namespace!;
      const name = object.metadata.name;
      const p = objectPath(r, ns, name);
      const current = await cluster.admin.request<KubeObject>('GET', p);
      // From the namespace's current version: an object's own version may be older than the
      // watch cache keeps (410 Gone).
      const filtered = new SeenWatch(
        cluster.admin,
        collectionPath(r, ns),
        await currentVersion(cluster.admin, collectionPath(r, ns)),
        `metadata.name=${name}`,
      );
      await sleep(300); // the filtered watch is open before the write
      const written = statusWrites((await convoy.get('/metrics')).body).written ?? 0;
      const body = creatable(object);
      body.metadata.resourceVersion = current.metadata.resourceVersion;
      const answer = await cluster.admin.request<KubeObject>('PUT', p, { body });
      const writeMs = nowMs();
      const rv = answer.metadata.resourceVersion!;
      const f = await filtered.when(rv, 60_000);
      const u = await byKind[r.kind]!.when(rv, 60_000);
      await filtered.stop();
      await sleep(Number(values['gap-ms']));
      const times = convoyTimes(convoy.log());
      const c = times.changes.get(rv) ?? null;
      const built = c === null ? null : (times.passes.find((t) => t >= c) ?? null);
      const rel = (t: number | null) => (t === null ? null : Math.round(t - writeMs));
      const e: EditFigures = {
        kind: r.kind,
        object: `${ns}/${name}`,
        resourceVersion: rv,
        writeMs: Math.round(writeMs - started),
        filteredMs: rel(f),
        unfilteredMs: rel(u),
        convoyMs: rel(c),
        builtMs: rel(built),
        statusesWritten: written,
      };
      edits.push(e);
      process.stdout.write(`${JSON.stringify(e)}\n`);
    }
    // Then until every status is written, as bench/status-scale.ts waits.
    const expected = world
      .objects()
      .filter((o) => (STATUS_KINDS as readonly string[]).includes(o.kind)).length;
    for (;;) {
      const w = statusWrites((await convoy.get('/metrics')).body);
      if (
        (w.written ?? 0) + (w.unchanged ?? 0) >= expected &&
        (await countCurrent(cluster.admin)) >= expected
      )
        break;
      if (nowMs() - started > 3_600_000) throw new Error('status incomplete after an hour');
      await sleep(2000);
    }
    const completeMs = Math.round(nowMs() - started);
    sampling = false;
    await sampler;
    const during = lagSamples.filter((x) => x.atMs <= completeMs && x.lagMs !== null).map((x) => x.lagMs!);
    const sorted = [...during].sort((a, b) => a - b);
    const q = (p: number) =>
      sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : null;
    const metricsText = (await convoy.get('/metrics')).body;
    const summary = {
      completeMs,
      probeLagMs: {
        samples: during.length,
        median: q(0.5),
        p90: q(0.9),
        p99: q(0.99),
        max: sorted.at(-1) ?? null,
        missing: lagSamples.filter((x) => x.lagMs === null).length,
      },
      lagSamples,
      writes: statusWrites(metricsText),
      windowMetrics: metricsText
        .split('\n')
        .filter(
          (l) => l.startsWith('convoy_status_write_window') || l.startsWith('convoy_status_echo_lag_seconds'),
        ),
      bench: 'status-edit-lag',
      size: size.name,
      rev: gitShortRev(path.resolve(__dirname, '..', '..')),
      node: process.version,
      writerArgs: extra,
      calibrationMs: [calibrationBefore, calibrationMs()],
      loadAverage: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
      readyMs: Math.round(readyMs),
      eventsSeen: Object.fromEntries(Object.entries(byKind).map(([k, w]) => [k, w.events])),
      medianConvoyMsByKind: Object.fromEntries(
        ['HTTPRoute', 'Secret'].map((k) => [
          k,
          median(edits.filter((e) => e.kind === k && e.convoyMs !== null).map((e) => e.convoyMs!)),
        ]),
      ),
      edits,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (values.out) fs.writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    for (const w of watches) await w.stop();
    await convoy?.dispose();
    await cluster.teardown();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
