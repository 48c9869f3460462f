/**
 * Certificates served outside their validity period are still served, with a warning condition
 * on the listener and a gauge of seconds until expiry (docs/gateway-api.md §8).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from '../support/controller-oracle';
import { nextBoundary, validityProblems } from '../../src/controller/certificate-validity';
import type { ConvoyMetrics } from '../../src/observability/metrics';
import { TypeUrl } from '../../src/envoy/resources';
import { leafValidity } from '../../src/pki/validity';
import type { ObjectStatus } from '../../src/status/types';
import type { KubeObject } from '../../src/store/objects';
import { gateway, gatewayClass, httpListener, httpsListener, storeOf, tlsSecret } from '../support/objects';
import { EXPIRED_CERT, EXPIRED_KEY, selfSignedCert } from '../support/certs';

const VALIDITY = 'convoy.dev/CertificateValidity';

async function setup(secret: KubeObject, clock: () => Date) {
  const store = storeOf(
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080), httpsListener('https', 8443, 'a.example.com', 'a-cert')]),
    secret,
  );
  return startController(store, { validityClock: clock });
}

function httpsConditions(
  published: ObjectStatus[][],
): { type: string; status: string; reason: string; message: string }[] {
  const gw = published.at(-1)!.find((s) => s.kind === 'Gateway')!;
  const listeners = gw.status.listeners as { name: string; conditions: never[] }[];
  return listeners.find((l) => l.name === 'https')!.conditions;
}

async function expiryGauge(metrics: ConvoyMetrics): Promise<Record<string, number>> {
  const text = await metrics.registry.getSingleMetricAsString('convoy_listener_certificate_expiry_seconds');
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/listener="([^"]+)"} (-?\d+)/g)) out[m[1]] = Number(m[2]);
  return out;
}

const fresh = selfSignedCert(['a.example.com']);
const freshPeriod = leafValidity(fresh.cert)!;

describe('certificate validity warnings', { concurrency: false }, () => {
  test('an expired certificate is served, with a warning and a negative gauge', async () => {
    const { cache, metrics, controller, published } = await setup(
      tlsSecret('a-cert', { cert: EXPIRED_CERT, key: EXPIRED_KEY }),
      () => new Date(),
    );
    try {
      assert.ok(cache.snapshot('default/edge')!.types[TypeUrl.Secret].entries.has('default/a-cert'));
      const conditions = httpsConditions(published);
      const warning = conditions.find((c) => c.type === VALIDITY);
      assert.equal(warning?.status, 'False');
      assert.equal(warning?.reason, 'Expired');
      assert.match(warning!.message, /Secret default\/a-cert expired at 20\d\d-/);
      assert.equal(conditions.find((c) => c.type === 'Programmed')?.status, 'True');
      assert.equal(conditions.find((c) => c.type === 'ResolvedRefs')?.status, 'True');
      const gauge = await expiryGauge(metrics);
      assert.deepEqual(Object.keys(gauge), ['Gateway/default/edge/https']);
      assert.ok(gauge['Gateway/default/edge/https'] < 0);
    } finally {
      controller.stop();
    }
  });

  test('not yet valid, then valid when the clock passes notBefore, without a build', async () => {
    let now = freshPeriod.notBefore - 30;
    const { metrics, controller, published } = await setup(
      tlsSecret('a-cert', { cert: fresh.cert, key: fresh.key }),
      () => new Date(now),
    );
    try {
      assert.equal(httpsConditions(published).find((c) => c.type === VALIDITY)?.reason, 'NotYetValid');
      const builds = (await metrics.builds.get()).values.reduce((n, v) => n + v.value, 0);
      now = freshPeriod.notBefore + 1;
      // The controller's timer fires at notBefore (30 ms of its clock from the last publication).
      const deadline = Date.now() + 20_000;
      while (httpsConditions(published).some((c) => c.type === VALIDITY) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(
        httpsConditions(published).find((c) => c.type === VALIDITY),
        undefined,
      );
      assert.equal(
        (await metrics.builds.get()).values.reduce((n, v) => n + v.value, 0),
        builds,
        'no build',
      );
      const gauge = await expiryGauge(metrics);
      assert.ok(gauge['Gateway/default/edge/https'] > 300 * 24 * 3600);
    } finally {
      controller.stop();
    }
  });

  test('rotating an expired certificate to a valid one takes the fast path and clears the warning', async () => {
    const { store, metrics, controller, published } = await setup(
      tlsSecret('a-cert', { cert: EXPIRED_CERT, key: EXPIRED_KEY }),
      () => new Date(),
    );
    try {
      assert.equal(httpsConditions(published).find((c) => c.type === VALIDITY)?.reason, 'Expired');
      store.put(tlsSecret('a-cert', { cert: fresh.cert, key: fresh.key }));
      await controller.settle();
      const secrets = (await metrics.builds.get()).values.find((v) => v.labels.result === 'secrets');
      assert.equal(secrets?.value, 1);
      assert.equal(
        httpsConditions(published).find((c) => c.type === VALIDITY),
        undefined,
      );
    } finally {
      controller.stop();
    }
  });

  test('validityProblems and nextBoundary', () => {
    const served = new Map([
      ['L1', [{ secret: 'ns/a', validity: { notBefore: 100, notAfter: 200 } }]],
      [
        'L2',
        [
          { secret: 'ns/b', validity: { notBefore: 0, notAfter: 50 } },
          { secret: 'ns/c', validity: { notBefore: 150, notAfter: 400 } },
        ],
      ],
    ]);
    assert.deepEqual(
      [...validityProblems(served, 120)].map(([l, p]) => [l, p.reason]),
      [['L2', 'Expired']],
    );
    assert.match(
      validityProblems(served, 120).get('L2')!.message,
      /ns\/b expired.*ns\/c is not valid before/,
    );
    assert.deepEqual([...validityProblems(served, 300).keys()], ['L1', 'L2']);
    assert.equal(validityProblems(served, 160).size, 1);
    assert.equal(nextBoundary(served, 120), 150);
    assert.equal(nextBoundary(served, 160), 201);
    assert.equal(nextBoundary(served, 500), undefined);
  });
});
