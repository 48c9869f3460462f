import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { convoyMain } from './harness/convoy';
import { freePort, request, startEchoBackend, type Backend, type EchoResponse } from './harness';
import { GW_API, K8sWorld, cond, convoyGateway, loopbackService } from './cluster/k8s-world';
import { repoRoot } from './harness/util';

/**
 * The legacy XListenerSet against a real API server (docs/gateway-api.md §29, operations.md §24):
 * its v1.4.1 CRD installed beside the v1 ones and its RBAC from deploy/xlistenerset/; a listener
 * without a port gets one from --dynamic-port-range, written to the status in the legacy schema
 * (the API server validates it) and served through a real Envoy; then `convoy migrate` over
 * `kubectl get -o yaml` passes `kubectl apply --dry-run=server`, and applied, the ListenerSet v1
 * serves the same traffic on the same port while the XListenerSet reports it is superseded.
 */

const X_API = 'gateway.networking.x-k8s.io/v1alpha1';
const LEGACY_CRD = 'gateway.networking.x-k8s.io_xlistenersets.yaml';

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A range of 10 free loopback ports below the ephemeral range. */
async function freeRange(): Promise<{ first: number; last: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20000 + Math.floor(Math.random() * 10000);
    let ok = true;
    for (let p = first; p < first + 10 && ok; p++) ok = await bindable(p);
    if (ok) return { first, last: first + 9 };
  }
  throw new Error('no free port range');
}

/** Runs `convoy migrate --assigned-ports -` on `input`; resolves with stdout, stderr and the exit code. */
function migrate(input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [convoyMain(), 'migrate', '--assigned-ports', '-'],
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

interface LegacyListener {
  name: string;
  port: number;
  attachedRoutes: number;
  conditions: { type: string; status: string; reason: string }[];
}

describe('XListenerSet against a real API server', { timeout: 300_000 }, () => {
  let w: K8sWorld;
  let backend: Backend;
  let gwPort: number;
  let range: { first: number; last: number };
  let assigned = 0;

  before(async () => {
    w = await K8sWorld.create();
    const crdDir = path.join(path.dirname(w.cluster.bins.crdDir), 'crds-legacy');
    assert.ok(
      fs.existsSync(path.join(crdDir, LEGACY_CRD)),
      `${crdDir} (run e2e/cluster/build-binaries.sh crds)`,
    );
    await w.cluster.kubectlOk(['apply', '--server-side', '-f', path.join(crdDir, LEGACY_CRD)]);
    await w.cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    await w.cluster.kubectlOk([
      'apply',
      '-f',
      path.join(repoRoot(), 'deploy', 'xlistenerset', '01-rbac-xlistenerset.yaml'),
    ]);
    await w.namespace('infra');
    backend = await startEchoBackend('tenant');
    gwPort = await freePort();
    range = await freeRange();
  });
  after(async () => {
    await backend?.close();
    await w?.dispose();
  });

  const get = (port: number) => request({ port, host: 'dyn.example.com', path: '/' });

  test('a listener without a port: assigned from the range, status in the legacy schema, served', async () => {
    await w.apply(loopbackService('tenant', 'infra', backend.port));
    await w.apply(convoyGateway('gw', 'infra', [{ name: 'http', protocol: 'HTTP', port: gwPort }]));
    await w.apply({
      apiVersion: X_API,
      kind: 'XListenerSet',
      metadata: { name: 'tenant', namespace: 'infra' },
      spec: {
        parentRef: { name: 'gw' },
        listeners: [{ name: 'dyn', protocol: 'HTTP', hostname: 'dyn.example.com' }],
      },
    });
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'tenant', namespace: 'infra' },
      spec: {
        parentRefs: [{ group: 'gateway.networking.x-k8s.io', kind: 'XListenerSet', name: 'tenant' }],
        rules: [{ backendRefs: [{ name: 'tenant', port: backend.port }] }],
      },
    });
    const convoy = await w.startConvoy('convoy', [
      '--enable-external-name-services',
      '--enable-xlistenerset',
      '--dynamic-port-range',
      `${range.first}-${range.last}`,
    ]);
    await w.startEnvoy(convoy, 'infra/gw');
    const x = await w.waitStatus(
      'XListenerSet',
      'infra',
      'tenant',
      (s) =>
        cond(s.conditions, 'Accepted')?.status === 'True' &&
        ((s.listeners as LegacyListener[] | undefined) ?? []).some((l) => l.attachedRoutes === 1),
      'XListenerSet accepted with its route attached',
      60_000,
    );
    assert.equal(x.apiVersion, X_API);
    const l = (x.status!.listeners as LegacyListener[])[0];
    assigned = l.port;
    assert.ok(assigned >= range.first && assigned <= range.last, `port ${assigned}`);
    assert.equal(cond(l.conditions, 'Programmed')?.status, 'True');
    const gw = await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s) => s.attachedListenerSets === 1,
      'attachedListenerSets 1',
    );
    assert.equal(gw.status?.attachedListenerSets, 1);
    let last = '';
    for (let i = 0; i < 150; i++) {
      const r = await get(assigned).catch((e: unknown) => ({ status: 0, body: String(e) }) as const);
      if (r.status === 200 && 'json' in r) {
        assert.equal(r.json<EchoResponse>().backend, 'tenant');
        return;
      }
      last = `${r.status} ${r.body.slice(0, 100)}`;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.fail(`no 200 on the assigned port ${assigned}: ${last}`);
  });

  test('convoy migrate output passes kubectl apply --dry-run=server; applied, the ListenerSet serves the same', async () => {
    assert.ok(assigned > 0, 'the first test assigned a port');
    const current = await w.cluster.kubectlOk([
      'get',
      'xlistenersets,httproutes',
      '-n',
      'infra',
      '-o',
      'yaml',
    ]);
    const out = await migrate(current);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, new RegExp(`assigned ports kept: dyn=${assigned}`));
    const dry = await w.cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: out.stdout });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /listenerset.gateway.networking.k8s.io\/tenant created \(server dry run\)/);
    await w.cluster.kubectlOk(['apply', '-f', '-'], { input: out.stdout });
    await w.waitStatus(
      'XListenerSet',
      'infra',
      'tenant',
      (s) => cond(s.conditions, 'Accepted')?.reason === 'SupersededByListenerSet',
      'XListenerSet superseded',
    );
    const v1 = await w.waitStatus(
      'ListenerSet',
      'infra',
      'tenant',
      (s) =>
        cond(s.conditions, 'Accepted')?.status === 'True' &&
        ((s.listeners as { attachedRoutes: number }[] | undefined) ?? []).some((l) => l.attachedRoutes === 1),
      'ListenerSet accepted with the migrated route',
    );
    assert.equal((v1.spec as { listeners: { port: number }[] }).listeners[0].port, assigned);
    const r = await get(assigned);
    assert.equal(r.status, 200, r.body.slice(0, 200));
    assert.equal(r.json<EchoResponse>().backend, 'tenant');
  });
});
