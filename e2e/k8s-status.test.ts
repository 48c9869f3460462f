import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { createCa, issueCert } from './harness';
import { CONTROLLER, GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { Condition, KObject } from './cluster/k8s-world';

/**
 * Test 1 of the Kubernetes e2e suite: `convoy serve` against a real API server, as Convoy's
 * ServiceAccount (deploy/01-rbac.yaml), and every status read back from the API server:
 * GatewayClass, Gateway (listeners, attachedListenerSets), ListenerSets (NotAllowed, conflicts,
 * ListenersNotValid, ReferenceGrant) and routes per parentRef.
 */

const isTrue = (c: Condition | undefined, reason?: string) =>
  c?.status === 'True' && (reason === undefined || c.reason === reason);
const isFalse = (c: Condition | undefined, reason: string) => c?.status === 'False' && c.reason === reason;

function listener(status: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  return (status.listeners as Record<string, unknown>[] | undefined)?.find((l) => l.name === name);
}

function parent(status: Record<string, unknown>, match: Record<string, unknown>) {
  return (
    status.parents as
      { parentRef: Record<string, unknown>; controllerName: string; conditions: Condition[] }[] | undefined
  )?.find((p) => Object.entries(match).every(([k, v]) => p.parentRef[k] === v));
}

function generationsCurrent(obj: KObject, conditions: unknown): boolean {
  return (
    Array.isArray(conditions) &&
    conditions.every((c: Condition) => c.observedGeneration === obj.metadata.generation)
  );
}

describe('status end to end against a real API server', { timeout: 300_000 }, () => {
  let w: K8sWorld;

  before(async () => {
    w = await K8sWorld.create();
    await w.namespace('infra');
    await w.namespace('apps');
    await w.namespace('other');
    await w.namespace('certs');
    await w.startConvoy();
  });
  after(async () => {
    await w?.dispose();
  });

  test('GatewayClass: Accepted, observedGeneration current, written by Convoy’s field manager', async () => {
    const gc = await w.waitStatus(
      'GatewayClass',
      undefined,
      'convoy',
      (s, o) => isTrue(cond(s.conditions, 'Accepted'), 'Accepted') && generationsCurrent(o, s.conditions),
      'GatewayClass Accepted',
    );
    const managers = (gc.metadata.managedFields as { manager: string; subresource?: string }[]).filter(
      (m) => m.subresource === 'status',
    );
    assert.ok(
      managers.some((m) => m.manager === 'convoy'),
      JSON.stringify(managers),
    );
    // A class for another controller is left alone.
    await w.apply({
      apiVersion: GW_API,
      kind: 'GatewayClass',
      metadata: { name: 'foreign' },
      spec: { controllerName: 'example.com/other' },
    });
    await new Promise((r) => setTimeout(r, 1500));
    const foreign = await w.get('GatewayClass', undefined, 'foreign');
    assert.ok(
      !isTrue(cond(foreign?.status?.conditions, 'Accepted')),
      `foreign class untouched: ${JSON.stringify(foreign?.status)}`,
    );
  });

  test('Gateway, ListenerSets and routes: conditions, counts and per-parent route status', async () => {
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: {
        gatewayClassName: 'convoy',
        allowedListeners: { namespaces: { from: 'Same' } },
        listeners: [
          { name: 'http', protocol: 'HTTP', port: 18080, allowedRoutes: { namespaces: { from: 'All' } } },
        ],
      },
    });
    // Accepted ListenerSet in the Gateway's namespace.
    await w.apply({
      apiVersion: GW_API,
      kind: 'ListenerSet',
      metadata: { name: 'ls-ok', namespace: 'infra' },
      spec: {
        parentRef: { name: 'gw' },
        listeners: [
          {
            name: 'extra',
            protocol: 'HTTP',
            port: 18081,
            hostname: 'a.example.com',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
        ],
      },
    });
    // Not allowed: another namespace, and allowedListeners is Same.
    await w.apply({
      apiVersion: GW_API,
      kind: 'ListenerSet',
      metadata: { name: 'ls-foreign', namespace: 'other' },
      spec: {
        parentRef: { name: 'gw', namespace: 'infra' },
        listeners: [{ name: 'l', protocol: 'HTTP', port: 18082 }],
      },
    });
    const gw = await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s, o) =>
        isTrue(cond(s.conditions, 'Accepted')) &&
        isTrue(cond(s.conditions, 'Programmed')) &&
        generationsCurrent(o, s.conditions) &&
        s.attachedListenerSets === 1,
      'Gateway Accepted/Programmed with one attached ListenerSet',
    );
    const http = listener(gw.status!, 'http')!;
    assert.ok(isTrue(cond(http.conditions, 'Accepted')));
    assert.ok(isTrue(cond(http.conditions, 'Programmed')));
    assert.ok(isTrue(cond(http.conditions, 'ResolvedRefs')));
    assert.ok(
      (http.supportedKinds as { group: string; kind: string }[]).some(
        (k) => k.kind === 'HTTPRoute' && k.group === 'gateway.networking.k8s.io',
      ),
    );
    assert.equal(
      (gw.status!.listeners as unknown[]).length,
      1,
      'ListenerSet listeners never appear in Gateway status',
    );

    await w.waitStatus(
      'ListenerSet',
      'infra',
      'ls-ok',
      (s, o) =>
        isTrue(cond(s.conditions, 'Accepted')) &&
        isTrue(cond(s.conditions, 'Programmed'), 'Programmed') &&
        generationsCurrent(o, s.conditions) &&
        isTrue(cond(listener(s, 'extra')?.conditions, 'Accepted')),
      'ls-ok Accepted',
    );
    await w.waitStatus(
      'ListenerSet',
      'other',
      'ls-foreign',
      (s) =>
        isFalse(cond(s.conditions, 'Accepted'), 'NotAllowed') &&
        isFalse(cond(s.conditions, 'Programmed'), 'NotAllowed'),
      'ls-foreign NotAllowed',
    );

    // A later ListenerSet whose only listener conflicts with ls-ok's: HostnameConflict, and
    // with no valid listener left, ListenersNotValid; it is not counted. (creationTimestamp has
    // one-second resolution and ties go by namespace/name, so the name also sorts after ls-ok.)
    await w.apply({
      apiVersion: GW_API,
      kind: 'ListenerSet',
      metadata: { name: 'ls-overlap', namespace: 'infra' },
      spec: {
        parentRef: { name: 'gw' },
        listeners: [{ name: 'dup', protocol: 'HTTP', port: 18081, hostname: 'a.example.com' }],
      },
    });
    const conflicted = await w.waitStatus(
      'ListenerSet',
      'infra',
      'ls-overlap',
      (s) =>
        isFalse(cond(s.conditions, 'Accepted'), 'ListenersNotValid') &&
        isTrue(cond(listener(s, 'dup')?.conditions, 'Conflicted'), 'HostnameConflict'),
      'ls-overlap ListenersNotValid with a HostnameConflict listener',
    );
    assert.ok(isFalse(cond(listener(conflicted.status!, 'dup')!.conditions, 'Accepted'), 'HostnameConflict'));
    assert.ok(isFalse(cond(conflicted.status!.conditions, 'Programmed'), 'ListenersNotValid'));

    // An HTTPS listener whose certificate is in another namespace: refused until a
    // ReferenceGrant from ListenerSets in infra allows it.
    const ca = createCa(path.join(w.dir, 'pki'));
    const cert = issueCert(ca, { name: 'tls', dnsNames: ['tls.example.com'] });
    await w.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tls-cert', namespace: 'certs' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(cert.cert).toString('base64'),
        'tls.key': Buffer.from(cert.key).toString('base64'),
      },
    });
    await w.apply({
      apiVersion: GW_API,
      kind: 'ListenerSet',
      metadata: { name: 'ls-tls', namespace: 'infra' },
      spec: {
        parentRef: { name: 'gw' },
        listeners: [
          {
            name: 'https',
            protocol: 'HTTPS',
            port: 18443,
            hostname: 'tls.example.com',
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls-cert', namespace: 'certs' }] },
          },
        ],
      },
    });
    await w.waitStatus(
      'ListenerSet',
      'infra',
      'ls-tls',
      (s) =>
        isFalse(cond(listener(s, 'https')?.conditions, 'ResolvedRefs'), 'RefNotPermitted') &&
        isFalse(cond(s.conditions, 'Accepted'), 'ListenersNotValid'),
      'ls-tls RefNotPermitted without a ReferenceGrant',
    );
    await w.apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ReferenceGrant',
      metadata: { name: 'listenersets-from-infra', namespace: 'certs' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'ListenerSet', namespace: 'infra' }],
        to: [{ group: '', kind: 'Secret' }],
      },
    });
    await w.waitStatus(
      'ListenerSet',
      'infra',
      'ls-tls',
      (s) =>
        isTrue(cond(listener(s, 'https')?.conditions, 'ResolvedRefs')) &&
        isTrue(cond(s.conditions, 'Accepted')) &&
        isTrue(cond(s.conditions, 'Programmed')),
      'ls-tls accepted once the ReferenceGrant exists',
    );
    await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s) => s.attachedListenerSets === 2,
      'attachedListenerSets 2',
    );

    // One route, three parentRefs, three independent entries.
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'r', namespace: 'apps' },
      spec: {
        parentRefs: [
          { name: 'gw', namespace: 'infra', sectionName: 'http' },
          { kind: 'ListenerSet', name: 'ls-ok', namespace: 'infra' },
          { name: 'gw', namespace: 'infra', sectionName: 'extra' },
        ],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }],
      },
    });
    const route = await w.waitStatus(
      'HTTPRoute',
      'apps',
      'r',
      (s, o) => {
        const ps = s.parents as { conditions: Condition[] }[] | undefined;
        return ps?.length === 3 && ps.every((p) => generationsCurrent(o, p.conditions));
      },
      'route status for three parentRefs',
    );
    const viaGateway = parent(route.status!, { kind: 'Gateway', name: 'gw', sectionName: 'http' })!;
    const viaSet = parent(route.status!, { kind: 'ListenerSet', name: 'ls-ok' })!;
    const wrongSection = parent(route.status!, { kind: 'Gateway', name: 'gw', sectionName: 'extra' })!;
    assert.ok(isTrue(cond(viaGateway.conditions, 'Accepted')), JSON.stringify(viaGateway));
    assert.ok(isTrue(cond(viaSet.conditions, 'Accepted')), JSON.stringify(viaSet));
    // A Gateway parentRef never reaches a ListenerSet's listener, even by its section name.
    assert.ok(
      isFalse(cond(wrongSection.conditions, 'Accepted'), 'NoMatchingParent'),
      JSON.stringify(wrongSection),
    );
    for (const p of [viaGateway, viaSet, wrongSection]) {
      assert.equal(p.controllerName, CONTROLLER);
      assert.equal(p.parentRef.group, 'gateway.networking.k8s.io');
      assert.equal(p.parentRef.namespace, 'infra');
    }
    await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s) => listener(s, 'http')?.attachedRoutes === 1,
      'Gateway listener http counts the route',
    );
    await w.waitStatus(
      'ListenerSet',
      'infra',
      'ls-ok',
      (s) => listener(s, 'extra')?.attachedRoutes === 1,
      'ListenerSet listener extra counts the route',
    );
  });

  test('route edits after Convoy wrote the route’s status take the route fast path, not a full build', async () => {
    // Convoy's own status write comes back as a watch event; an edit after it must still be
    // recognised as an edit of the version the last build saw (convoy_full_builds_total stays).
    const convoy = w.convoys[0]!;
    const counter = async (name: string, label: string, value: string) => {
      const page = (await convoy.get('/metrics')).body;
      const m = page.match(new RegExp(`^${name}\\{${label}="${value}"\\} (\\d+)`, 'm'));
      return m ? Number(m[1]) : 0;
    };
    const route = (prefix: string): KObject => ({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'fast', namespace: 'apps' },
      spec: {
        parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }],
        hostnames: ['fast.example.com'],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: prefix } }] }],
      },
    });
    const accepted = (generation: number) => (s: Record<string, unknown>, o: KObject) =>
      o.metadata.generation === generation &&
      isTrue(cond(parent(s, { name: 'gw' })?.conditions, 'Accepted')) &&
      generationsCurrent(o, parent(s, { name: 'gw' })?.conditions);
    await w.apply(route('/one'));
    await w.waitStatus('HTTPRoute', 'apps', 'fast', accepted(1), 'route fast Accepted');
    for (const [i, prefix] of ['/two', '/three'].entries()) {
      const fallbacks = await counter('convoy_full_builds_total', 'reason', 'route_fast_path_precondition');
      const fastPaths = await counter('convoy_builds_total', 'result', 'route');
      await w.apply(route(prefix));
      await w.waitStatus('HTTPRoute', 'apps', 'fast', accepted(2 + i), `route fast generation ${2 + i}`);
      assert.equal(
        await counter('convoy_full_builds_total', 'reason', 'route_fast_path_precondition'),
        fallbacks,
        `edit ${prefix}: no fallback to a full build`,
      );
      assert.equal(await counter('convoy_builds_total', 'result', 'route'), fastPaths + 1, `edit ${prefix}`);
    }
    await w.delete('HTTPRoute', 'apps', 'fast');
  });

  test('a spec change is reflected with the new observedGeneration; deleting a route leaves nothing stale', async () => {
    const before = (await w.get('Gateway', 'infra', 'gw'))!;
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: {
        gatewayClassName: 'convoy',
        allowedListeners: { namespaces: { from: 'Same' } },
        listeners: [
          { name: 'http', protocol: 'HTTP', port: 18080, allowedRoutes: { namespaces: { from: 'All' } } },
          { name: 'second', protocol: 'HTTP', port: 18090, hostname: 'b.example.com' },
        ],
      },
    });
    const after = await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s, o) =>
        o.metadata.generation! > before.metadata.generation! &&
        generationsCurrent(o, s.conditions) &&
        isTrue(cond(listener(s, 'second')?.conditions, 'Programmed')),
      'Gateway status for the new generation',
    );
    assert.equal((after.status!.listeners as unknown[]).length, 2);
    // Routes from another namespace cannot use the new listener (allowedRoutes defaults to Same).
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'r2', namespace: 'apps' },
      spec: { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'second' }] },
    });
    await w.waitStatus(
      'HTTPRoute',
      'apps',
      'r2',
      (s) =>
        isFalse(cond(parent(s, { sectionName: 'second' })?.conditions, 'Accepted'), 'NotAllowedByListeners'),
      'r2 NotAllowedByListeners',
    );
    // r2 moves to a Gateway of another controller's class: Convoy removes its own entry.
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'elsewhere', namespace: 'infra' },
      spec: { gatewayClassName: 'foreign', listeners: [{ name: 'http', protocol: 'HTTP', port: 18099 }] },
    });
    await w.apply({
      apiVersion: GW_API,
      kind: 'HTTPRoute',
      metadata: { name: 'r2', namespace: 'apps' },
      spec: { parentRefs: [{ name: 'elsewhere', namespace: 'infra' }] },
    });
    await w.waitStatus(
      'HTTPRoute',
      'apps',
      'r2',
      (s) =>
        Array.isArray(s.parents) &&
        !(s.parents as { controllerName: string }[]).some((p) => p.controllerName === CONTROLLER),
      'Convoy’s parent entry removed from a route it no longer manages',
    );
    await w.delete('HTTPRoute', 'apps', 'r');
    await w.waitStatus(
      'Gateway',
      'infra',
      'gw',
      (s) => listener(s, 'http')?.attachedRoutes === 0,
      'attachedRoutes back to 0',
    );
  });
});
