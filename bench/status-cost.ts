/**
 * Measures what one status write costs the API server, by request form: the bench world is
 * created in a real kube-apiserver (e2e/cluster), `convoy serve` writes its statuses once (so they
 * are Convoy's real statuses) and stops, then every HTTPRoute, ListenerSet and Gateway has its
 * status rewritten in each form in turn while this bench watches those kinds as Convoy would, and
 * the API server's, etcd's and this client's CPU seconds per write are read from /proc.
 *
 * Why: status at scale is bound by the API server's CPU per status write (bench/README.md "Status
 * at scale"); this says which request form the status writer should use (docs/gateway-api.md §16).
 *
 * Each rewrite changes one condition message, so every request really writes (an unchanged status
 * would be a no-op the API server short-cuts). Forms:
 *   put          PUT …/status with the whole object as the provider holds it (metadata trimmed)
 *   put-status   PUT …/status with only apiVersion, kind, name, namespace, resourceVersion, status
 *   merge-rv     PATCH …/status, merge patch of metadata.resourceVersion and status
 *   merge        PATCH …/status, merge patch of status only (no precondition)
 *   json-rv      PATCH …/status, JSON patch: test resourceVersion, replace /status
 *   apply        PATCH …/status, server-side apply of status (force)
 *
 * Usage: node dist/bench/status-cost.js [--size small] [--rounds 3] [--forms put,merge-rv,…]
 *   [--pprof-dir DIR] [--pprof-seconds 20] [--out FILE.json]. Needs CONVOY_K8S_BIN_DIR and
 *   CONVOY_CRD_DIR like the e2e tests.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { LocalCluster } from '../e2e/cluster/cluster';
import type { ConvoyProcess } from '../e2e/harness';
import type { KubeClient } from '../src/kubernetes/client';
import { statusCodeOf } from '../src/kubernetes/client';
import { collectionPath, objectPath, resourceForKind, trimObject } from '../src/kubernetes/resources';
import type { KubeObject } from '../src/store/objects';
import { calibrationMs, gitShortRev, round } from './common';
import { apiserverCpuProfile, childCpuSeconds, cpuDelta } from './e2e/apiserver-figures';
import { startConvoyOnCluster } from './e2e/kube-convoy';
import { createWorld } from './e2e/kube-world';
import { countCurrent, STATUS_KINDS, statusWrites } from './e2e/status-complete';
import { SIZES, World } from './world';

const FORMS = ['put', 'put-status', 'merge-rv', 'merge', 'json-rv', 'apply'] as const;
type Form = (typeof FORMS)[number];
const CONCURRENCY = 32;
const REWRITTEN_KINDS = ['HTTPRoute', 'ListenerSet', 'Gateway'];

interface Target {
  kind: string;
  path: string;
  /** The object as Convoy's provider holds it (trimmed), with its latest resourceVersion. */
  object: KubeObject;
}

interface FormResult {
  form: Form;
  writes: number;
  conflicts: number;
  wallMs: number;
  /** CPU ms per write of each process (kube-apiserver, etcd) and of this client (writes and watch). */
  cpuMsPerWrite: Record<string, number>;
  /** Mean request body bytes. */
  bodyBytes: number;
}

/** Lists every object of the rewritten kinds, trimmed as Convoy's provider trims them. */
async function listTargets(client: KubeClient): Promise<Target[]> {
  const out: Target[] = [];
  for (const kind of REWRITTEN_KINDS) {
    const r = resourceForKind(kind)!;
    const page = await client.request<{ items: Record<string, unknown>[] }>('GET', collectionPath(r));
    for (const item of page.items) {
      const object = trimObject(r, item);
      out.push({ kind, path: objectPath(r, object.metadata.namespace, object.metadata.name), object });
    }
  }
  return out;
}

/** Returns `status` with the first condition message found given the suffix ` (round N)`. */
function touched(status: Record<string, unknown>, round: number): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(status)) as Record<string, unknown>;
  const conditions = (
    Array.isArray(copy.parents) ? (copy.parents[0] as Record<string, unknown>).conditions : copy.conditions
  ) as { message?: string }[];
  const c = conditions[0]!;
  c.message = `${(c.message ?? '').replace(/ \(round \d+\)$/, '')} (round ${round})`;
  return copy;
}

/** Returns the request (method, body, content type, query) of one status write in `form`. */
function request(
  form: Form,
  o: KubeObject,
  status: Record<string, unknown>,
): { method: string; body: unknown; contentType?: string; query: Record<string, string> } {
  const query: Record<string, string> = { fieldManager: 'convoy' };
  const rv = o.metadata.resourceVersion;
  const meta = { name: o.metadata.name, namespace: o.metadata.namespace };
  switch (form) {
    case 'put':
      return { method: 'PUT', body: { ...o, status }, query };
    case 'put-status':
      return {
        method: 'PUT',
        body: { apiVersion: o.apiVersion, kind: o.kind, metadata: { ...meta, resourceVersion: rv }, status },
        query,
      };
    case 'merge-rv':
      return {
        method: 'PATCH',
        body: { metadata: { resourceVersion: rv }, status },
        contentType: 'application/merge-patch+json',
        query,
      };
    case 'merge':
      return { method: 'PATCH', body: { status }, contentType: 'application/merge-patch+json', query };
    case 'json-rv':
      return {
        method: 'PATCH',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: rv },
          { op: 'replace', path: '/status', value: status },
        ],
        contentType: 'application/json-patch+json',
        query,
      };
    case 'apply':
      return {
        method: 'PATCH',
        body: { apiVersion: o.apiVersion, kind: o.kind, metadata: meta, status },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'convoy-apply', force: 'true' },
      };
  }
}

/** Rewrites every target's status `rounds` times in `form`, 32 requests in flight; returns counts. */
async function rewriteAll(
  client: KubeClient,
  targets: Target[],
  form: Form,
  rounds: number,
  firstRound: number,
): Promise<{ writes: number; conflicts: number; bytes: number }> {
  let writes = 0;
  let conflicts = 0;
  let bytes = 0;
  for (let k = 0; k < rounds; k++) {
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const t = targets[next++]!;
        const req = request(
          form,
          t.object,
          touched((t.object.status ?? {}) as Record<string, unknown>, firstRound + k),
        );
        bytes += Buffer.byteLength(JSON.stringify(req.body));
        try {
          const updated = await client.request<Record<string, unknown>>(req.method, `${t.path}/status`, {
            query: req.query,
            body: req.body,
            contentType: req.contentType,
          });
          t.object = trimObject(resourceForKind(t.kind)!, updated);
          writes++;
        } catch (err) {
          if (statusCodeOf(err) !== 409) throw err;
          conflicts++;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }
  return { writes, conflicts, bytes };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'small' },
      rounds: { type: 'string', default: '3' },
      forms: { type: 'string', default: FORMS.join(',') },
      'pprof-dir': { type: 'string' },
      'pprof-seconds': { type: 'string', default: '20' },
      out: { type: 'string' },
    },
  });
  const size = SIZES[values.size];
  if (!size) throw new Error(`unknown size ${values.size}`);
  const forms = values.forms.split(',') as Form[];
  for (const f of forms) if (!FORMS.includes(f)) throw new Error(`unknown form ${f}`);
  const rounds = Math.max(1, Number(values.rounds));
  const pprofDir = values['pprof-dir'];
  const pprofSeconds = Number(values['pprof-seconds']);
  if (pprofDir) fs.mkdirSync(pprofDir, { recursive: true });
  const calibrationBefore = calibrationMs();
  const world = new World({ size });
  const cluster = await LocalCluster.start({});
  let convoy: ConvoyProcess | undefined;
  const watches = new AbortController();
  const results: FormResult[] = [];
  try {
    const objects = world.objects();
    const expected = objects.filter((o) => (STATUS_KINDS as readonly string[]).includes(o.kind)).length;
    await createWorld(cluster.admin, objects);
    convoy = await startConvoyOnCluster(cluster, 'convoy-status-cost');
    for (;;) {
      const w = statusWrites((await convoy.get('/metrics')).body);
      if (
        (w.written ?? 0) + (w.unchanged ?? 0) >= expected &&
        (await countCurrent(cluster.admin)) >= expected
      )
        break;
      await new Promise((r) => setTimeout(r, 500));
    }
    // Convoy stops here: it would put its own statuses back whenever it rebuilds or regains the
    // lease. The bench watches the rewritten kinds instead, as Convoy's informers do, so the API
    // server still sends every write back to one watcher per kind (the client CPU includes that).
    await convoy.dispose();
    convoy = undefined;
    const targets = await listTargets(cluster.admin);
    for (const kind of REWRITTEN_KINDS) {
      const r = resourceForKind(kind)!;
      void cluster.admin
        .watch(collectionPath(r), () => undefined, {
          query: { resourceVersion: '0', allowWatchBookmarks: true },
          signal: watches.signal,
        })
        .catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 2000));
    let roundNo = 0;
    for (const form of forms) {
      const cpuBefore = childCpuSeconds();
      const selfBefore = process.cpuUsage();
      const t0 = performance.now();
      const profile = pprofDir
        ? apiserverCpuProfile(cluster, pprofSeconds, path.join(pprofDir, `apiserver-${form}.pprof`))
        : undefined;
      const counts = await rewriteAll(cluster.admin, targets, form, rounds, roundNo);
      roundNo += rounds;
      const wallMs = performance.now() - t0;
      const cpu = cpuDelta(cpuBefore, childCpuSeconds());
      const self = process.cpuUsage(selfBefore);
      await profile;
      const perWrite = (s: number) => round((s * 1000) / counts.writes, 2);
      const r: FormResult = {
        form,
        writes: counts.writes,
        conflicts: counts.conflicts,
        wallMs: Math.round(wallMs),
        cpuMsPerWrite: {
          'kube-apiserver': perWrite(cpu['kube-apiserver'] ?? 0),
          etcd: perWrite(cpu.etcd ?? 0),
          client: perWrite((self.user + self.system) / 1e6),
        },
        bodyBytes: Math.round(counts.bytes / (counts.writes + counts.conflicts)),
      };
      results.push(r);
      process.stdout.write(`${JSON.stringify(r)}\n`);
      // Let Convoy's informers settle before the next form is measured.
      await new Promise((res) => setTimeout(res, 3000));
    }
  } finally {
    watches.abort();
    await convoy?.dispose();
    await cluster.teardown();
  }
  const summary = {
    bench: 'status-cost',
    size: size.name,
    rev: gitShortRev(path.resolve(__dirname, '..', '..')),
    node: process.version,
    rounds,
    calibrationMs: [calibrationBefore, calibrationMs()],
    forms: results,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (values.out) fs.writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
