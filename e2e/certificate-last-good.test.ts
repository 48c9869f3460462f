import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { createCa, issueCert, request, waitFor, type CaFiles, type CertFiles } from './harness';
import { CONTROLLER, GATEWAY, World, condition, listenerStatus, type ConditionEntry } from './support/world';
import { EXPIRED_CERT, EXPIRED_KEY } from '../test/support/certs';

/**
 * Issue 10 row 4 through a real Envoy in file mode: a Secret rotated to an invalid key pair keeps
 * the last good certificate in service (and says so in status), a valid rotation replaces it, and
 * a listener whose certificate was never valid is not programmed; an expired certificate is served
 * with a warning and a gauge (docs/gateway-api.md §8).
 */

const API = 'gateway.networking.k8s.io/v1';
const LAST_GOOD = 'convoy.dev/ServingLastGoodCertificate';

function secretDoc(name: string, crt: string, key: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default' },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
  };
}

describe('last good certificate through real Envoy (file mode)', { concurrency: false }, () => {
  let w: World;
  let ca: CaFiles;
  let first: CertFiles;
  let rotated: CertFiles;
  let other: CertFiles;

  const get = (sni: string, port = w.ports.https) =>
    request({ port, host: sni, path: '/', tls: { servername: sni } });

  /** Waits for the Gateway's listener `name` to have conditions satisfying `ok`; returns the status. */
  const waitListener = (name: string, ok: (conditions: ConditionEntry[]) => boolean, what: string) =>
    w.waitStatus(
      'Gateway',
      GATEWAY.name,
      (s) => {
        const l = listenerStatus(s, name);
        return l !== undefined && ok(l.conditions);
      },
      what,
    );

  before(async () => {
    w = await World.create('delta');
    ca = createCa(path.join(w.dir, 'rotation-pki'), 'rotation-ca');
    first = issueCert(ca, { name: 'www.example.com', dnsNames: ['www.example.com'] });
    rotated = issueCert(ca, { name: 'www-rotated', dnsNames: ['www.example.com'] });
    other = issueCert(ca, { name: 'other', dnsNames: ['other.example.com'] });
    await w.addBackend('web');
    w.write('00-gateway.yaml', [
      {
        apiVersion: API,
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: CONTROLLER },
      },
      {
        apiVersion: API,
        kind: 'Gateway',
        metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace },
        spec: {
          gatewayClassName: 'convoy',
          allowedListeners: { namespaces: { from: 'Same' } },
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: w.ports.https,
              hostname: 'www.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'www-cert' }] },
            },
          ],
        },
      },
      {
        apiVersion: API,
        kind: 'HTTPRoute',
        metadata: { name: 'web', namespace: 'default' },
        spec: { parentRefs: [{ name: GATEWAY.name }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
    ]);
    w.write('01-services.yaml', w.serviceDocs('web'));
    w.write('02-secret.yaml', [secretDoc('www-cert', first.cert, first.key)]);
    await w.startConvoy();
    await w.startEnvoy();
    await waitFor(async () => (await get('www.example.com').catch(() => undefined))?.status === 200, {
      what: 'first HTTPS request through Envoy',
      timeoutMs: 30_000,
      context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
    });
  });

  after(async () => {
    await w?.dispose();
  });

  test('a Secret rotated to an invalid key pair keeps the last good certificate in service', async () => {
    const served = await get('www.example.com');
    assert.equal(served.status, 200);
    assert.equal(served.peerCertificate?.subjectCN, 'www.example.com');
    const fingerprint = served.peerCertificate?.fingerprint256;
    assert.ok(fingerprint);
    const rejectedBefore = await w.envoy.counter('listener_manager.lds.update_rejected').catch(() => 0);

    for (const [what, crt, key, message] of [
      ['a key that does not match', first.cert, other.key, /does not match|private key/],
      ['a chain in the wrong order', ca.cert + first.cert, first.key, /out of order/],
    ] as const) {
      w.write('02-secret.yaml', [secretDoc('www-cert', crt, key)]);
      const gw = await waitListener(
        'https',
        (c) =>
          summary(c, 'ResolvedRefs') === 'False/InvalidCertificateRef' &&
          message.test(condition(c, 'ResolvedRefs')?.message ?? ''),
        `ResolvedRefs=False/InvalidCertificateRef for ${what}`,
      );
      const l = listenerStatus(gw, 'https')!;
      assert.match(condition(l.conditions, 'ResolvedRefs')!.message ?? '', message);
      assert.equal(condition(l.conditions, 'Programmed')?.status, 'True', `${what}: still programmed`);
      assert.equal(
        condition(l.conditions, LAST_GOOD)?.status,
        'True',
        `${what}: says the last good is served`,
      );
      assert.equal(condition(l.conditions, LAST_GOOD)?.reason, 'LastGoodCertificate');
      await w.waitEnvoySynced(`Envoy synced after ${what}`);
      for (let i = 0; i < 10; i++) {
        const r = await get('www.example.com');
        assert.equal(r.status, 200, `${what}: request ${i}`);
        assert.equal(
          r.peerCertificate?.fingerprint256,
          fingerprint,
          `${what}: the first certificate is served`,
        );
      }
    }
    const rejectedAfter = await w.envoy.counter('listener_manager.lds.update_rejected').catch(() => 0);
    assert.equal(rejectedAfter, rejectedBefore, 'Envoy rejected nothing');
  });

  test('fixing the Secret with a new valid certificate serves it and clears the conditions', async () => {
    w.write('02-secret.yaml', [secretDoc('www-cert', rotated.cert, rotated.key)]);
    await waitFor(async () => (await get('www.example.com')).peerCertificate?.subjectCN === 'www-rotated', {
      what: 'the rotated certificate served',
      timeoutMs: 30_000,
    });
    const gw = await waitListener(
      'https',
      (c) => summary(c, 'ResolvedRefs') === 'True/ResolvedRefs' && condition(c, LAST_GOOD) === undefined,
      'conditions clear after the fix',
    );
    assert.equal(condition(listenerStatus(gw, 'https')!.conditions, 'Programmed')?.status, 'True');
    // The new certificate is now the last good one: breaking it again keeps serving it.
    w.write('02-secret.yaml', [secretDoc('www-cert', rotated.cert, first.key)]);
    await waitListener(
      'https',
      (c) => summary(c, LAST_GOOD) === 'True/LastGoodCertificate',
      'last good again',
    );
    await w.waitEnvoySynced('Envoy synced after breaking the rotated certificate');
    assert.equal((await get('www.example.com')).peerCertificate?.subjectCN, 'www-rotated');
    w.write('02-secret.yaml', [secretDoc('www-cert', rotated.cert, rotated.key)]);
  });

  test('a new listener whose certificate was never valid is not programmed', async () => {
    w.write('10-fresh.yaml', [
      secretDoc('fresh-cert', other.cert, first.key),
      {
        apiVersion: API,
        kind: 'ListenerSet',
        metadata: { name: 'fresh', namespace: 'default' },
        spec: {
          parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: GATEWAY.name },
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: w.ports.tls,
              hostname: 'other.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'fresh-cert' }] },
            },
          ],
        },
      },
    ]);
    const set = await w.waitStatus(
      'ListenerSet',
      'fresh',
      (s) => Array.isArray(s.status.listeners),
      'fresh ListenerSet status',
    );
    const l = listenerStatus(set, 'https')!;
    assert.equal(condition(l.conditions, 'Programmed')?.status, 'False');
    assert.equal(condition(l.conditions, 'ResolvedRefs')?.reason, 'InvalidCertificateRef');
    assert.equal(condition(l.conditions, LAST_GOOD), undefined);
    await w.waitEnvoySynced('Envoy synced with the fresh ListenerSet');
    await assert.rejects(get('other.example.com', w.ports.tls), 'nothing listens on the fresh port');
    assert.equal((await get('www.example.com')).status, 200, 'the served listener is untouched');
  });

  test('an expired certificate is served, with a warning condition and a negative expiry gauge', async () => {
    w.write('11-expired.yaml', [
      secretDoc('old-cert', EXPIRED_CERT, EXPIRED_KEY),
      {
        apiVersion: API,
        kind: 'ListenerSet',
        metadata: { name: 'old', namespace: 'default' },
        spec: {
          parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: GATEWAY.name },
          listeners: [
            {
              name: 'https',
              protocol: 'HTTPS',
              port: w.ports.http,
              hostname: 'old.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'old-cert' }] },
            },
          ],
        },
      },
    ]);
    const set = await w.waitStatus(
      'ListenerSet',
      'old',
      (s) => {
        const l = Array.isArray(s.status.listeners) ? listenerStatus(s, 'https') : undefined;
        return l !== undefined && condition(l.conditions, 'convoy.dev/CertificateValidity') !== undefined;
      },
      'old ListenerSet warns about its expired certificate',
    );
    const l = listenerStatus(set, 'https')!;
    assert.equal(summary(l.conditions, 'convoy.dev/CertificateValidity'), 'False/Expired');
    assert.equal(summary(l.conditions, 'Programmed'), 'True/Programmed');
    assert.equal(summary(l.conditions, 'ResolvedRefs'), 'True/ResolvedRefs');
    const served = await waitFor(
      async () => {
        const r = await get('old.example.com', w.ports.http).catch(() => undefined);
        return r?.peerCertificate?.subjectCN === 'old.example.com' ? r : undefined;
      },
      { what: 'the expired certificate served by Envoy', timeoutMs: 30_000 },
    );
    assert.equal(served.peerCertificate?.subjectCN, 'old.example.com');
    const metrics = (await w.convoy.get('/metrics')).body;
    const gauge = (listener: string) =>
      Number(
        new RegExp(`convoy_listener_certificate_expiry_seconds\\{listener="${listener}"\\} (-?\\d+)`).exec(
          metrics,
        )?.[1],
      );
    assert.ok(gauge('ListenerSet/default/old/https') < 0, metrics);
    assert.ok(gauge('Gateway/default/edge/https') > 0, metrics);
  });
});

/** `status/reason` of the condition of `type`, or undefined when it is absent. */
function summary(conditions: ConditionEntry[], type: string): string | undefined {
  const c = condition(conditions, type);
  return c && `${c.status}/${c.reason}`;
}
