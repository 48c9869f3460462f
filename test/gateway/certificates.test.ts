import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  resolveCertificateRef,
  resolveListenerCertificates,
  secretToModel,
} from '../../src/gateway/certificates';
import { checkKeyPair, pemBlocks, validateKeyPair } from '../../src/pki/keypair';
import { leafValidity } from '../../src/pki/validity';
import type { ListenerOwner } from '../../src/gateway/resolved';
import type { SecretObjectReference } from '../../src/gateway/api';
import type { KubeObject } from '../../src/store/objects';
import { b64, referenceGrant, storeOf, tlsSecret } from '../support/objects';
import {
  EXPIRED_CERT,
  EXPIRED_KEY,
  INTERMEDIATE_CERT,
  LEAF_CERT,
  LEAF_KEY,
  ROOT_CERT,
  SELF_CERT,
  SELF_KEY,
} from '../support/certs';

describe('checkKeyPair', () => {
  test('a usable pair carries the leaf validity period that leafValidity reads', () => {
    for (const [cert, key] of [
      [LEAF_CERT + INTERMEDIATE_CERT, LEAF_KEY],
      [EXPIRED_CERT, EXPIRED_KEY],
    ]) {
      const check = checkKeyPair(cert, key);
      assert.ok(check.ok);
      assert.deepEqual(check.validity, leafValidity(cert));
      assert.ok(check.validity && check.validity.notBefore < check.validity.notAfter);
    }
  });

  test('an unusable pair carries the problem and no period', () => {
    const check = checkKeyPair(LEAF_CERT, SELF_KEY);
    assert.deepEqual(check, { ok: false, error: 'tls.key does not match the certificate' });
  });

  test('the SecretModel of a valid Secret carries the period, so it is not parsed again', () => {
    const res = secretToModel(
      tlsSecret('s', { namespace: 'ns', cert: EXPIRED_CERT, key: EXPIRED_KEY }),
      'ns',
    );
    assert.ok(res.ok);
    assert.deepEqual(res.secret.validity, leafValidity(EXPIRED_CERT));
  });
});

describe('validateKeyPair', () => {
  const cases: { name: string; cert: string; key: string; ok: boolean; match?: RegExp }[] = [
    { name: 'leaf alone', cert: LEAF_CERT, key: LEAF_KEY, ok: true },
    { name: 'leaf + intermediate', cert: LEAF_CERT + INTERMEDIATE_CERT, key: LEAF_KEY, ok: true },
    {
      name: 'leaf + intermediate + root',
      cert: LEAF_CERT + INTERMEDIATE_CERT + ROOT_CERT,
      key: LEAF_KEY,
      ok: true,
    },
    { name: 'self-signed RSA', cert: SELF_CERT, key: SELF_KEY, ok: true },
    { name: 'expired certificates are still accepted', cert: EXPIRED_CERT, key: EXPIRED_KEY, ok: true },
    {
      name: 'chain out of order',
      cert: INTERMEDIATE_CERT + LEAF_CERT,
      key: LEAF_KEY,
      ok: false,
      match: /out of order/,
    },
    {
      name: 'skipped intermediate',
      cert: LEAF_CERT + ROOT_CERT,
      key: LEAF_KEY,
      ok: false,
      match: /out of order/,
    },
    {
      name: 'unrelated certificate in the chain',
      cert: LEAF_CERT + SELF_CERT,
      key: LEAF_KEY,
      ok: false,
      match: /out of order/,
    },
    {
      name: 'key of another certificate',
      cert: LEAF_CERT,
      key: SELF_KEY,
      ok: false,
      match: /does not match/,
    },
    { name: 'no certificate', cert: 'hello', key: LEAF_KEY, ok: false, match: /no PEM certificate/ },
    {
      name: 'corrupt certificate body',
      cert: '-----BEGIN CERTIFICATE-----\nAAAAAAAAAAAA\n-----END CERTIFICATE-----\n',
      key: LEAF_KEY,
      ok: false,
      match: /does not parse/,
    },
    {
      name: 'corrupt key',
      cert: LEAF_CERT,
      key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
      ok: false,
      match: /private key/,
    },
    { name: 'empty key', cert: LEAF_CERT, key: '', ok: false, match: /private key/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const problem = validateKeyPair(c.cert, c.key);
      if (c.ok) assert.equal(problem, undefined);
      else {
        assert.ok(problem, 'expected a problem');
        if (c.match) assert.match(problem, c.match);
      }
    });
  }
  test('pemBlocks splits a bundle', () => {
    assert.equal(pemBlocks(LEAF_CERT + INTERMEDIATE_CERT + ROOT_CERT, 'CERTIFICATE').length, 3);
    assert.equal(pemBlocks(LEAF_KEY, 'CERTIFICATE').length, 0);
  });
});

describe('secretToModel', () => {
  test('valid Secret → SecretModel named ns/name with the PEMs', () => {
    const res = secretToModel(tlsSecret('web', { namespace: 'certs' }), 'certs');
    assert.ok(res.ok);
    assert.equal(res.secret.name, 'certs/web');
    assert.equal(res.secret.certificateChain, LEAF_CERT + INTERMEDIATE_CERT);
    assert.equal(res.secret.privateKey, LEAF_KEY);
  });
  const bad: { name: string; secret: KubeObject; match: RegExp }[] = [
    {
      name: 'Opaque type',
      secret: tlsSecret('web', { namespace: 'certs', cert: LEAF_CERT, key: LEAF_KEY, type: 'Opaque' }),
      match: /type kubernetes.io\/tls/,
    },
    {
      name: 'missing tls.crt',
      secret: { ...tlsSecret('web', { namespace: 'certs' }), data: { 'tls.key': b64(LEAF_KEY) } },
      match: /no tls.crt/,
    },
    {
      name: 'missing tls.key',
      secret: { ...tlsSecret('web', { namespace: 'certs' }), data: { 'tls.crt': b64(LEAF_CERT) } },
      match: /no tls.key/,
    },
    {
      name: 'no data',
      secret: { ...tlsSecret('web', { namespace: 'certs' }), data: undefined },
      match: /no tls.crt/,
    },
    {
      name: 'not base64',
      secret: {
        ...tlsSecret('web', { namespace: 'certs' }),
        data: { 'tls.crt': '!!!', 'tls.key': b64(LEAF_KEY) },
      },
      match: /no tls.crt/,
    },
    {
      name: 'malformed PEM',
      secret: tlsSecret('web', { namespace: 'certs', cert: 'not a cert', key: LEAF_KEY }),
      match: /invalid/,
    },
    {
      name: 'mismatched key',
      secret: tlsSecret('web', { namespace: 'certs', cert: LEAF_CERT, key: SELF_KEY }),
      match: /does not match/,
    },
  ];
  for (const c of bad) {
    test(`${c.name} → InvalidCertificateRef`, () => {
      const res = secretToModel(c.secret, 'certs');
      assert.equal(res.ok, false);
      if (!res.ok) {
        assert.equal(res.reason, 'InvalidCertificateRef');
        assert.match(res.message, c.match);
        assert.ok(!res.message.includes('BEGIN'), 'messages never carry Secret contents');
      }
    });
  }
});

describe('resolveCertificateRef', () => {
  const G = 'gateway.networking.k8s.io';
  const gwOwner: ListenerOwner = { kind: 'Gateway', namespace: 'infra', name: 'gw' };
  const lsOwner: ListenerOwner = { kind: 'ListenerSet', namespace: 'infra', name: 'ls' };
  const grantFor = (kind: string) =>
    referenceGrant(
      `allow-${kind}`,
      {
        from: [{ group: G, kind, namespace: 'infra' }],
        to: [{ group: '', kind: 'Secret' }],
      },
      { namespace: 'certs' },
    );
  const cases: {
    name: string;
    owner?: ListenerOwner;
    ref: SecretObjectReference;
    objects: KubeObject[];
    want: 'ok' | 'InvalidCertificateRef' | 'RefNotPermitted';
  }[] = [
    {
      name: 'same-namespace Secret',
      ref: { name: 'web' },
      objects: [tlsSecret('web', { namespace: 'infra' })],
      want: 'ok',
    },
    {
      name: 'explicit core group and kind',
      ref: { group: '', kind: 'Secret', name: 'web' },
      objects: [tlsSecret('web', { namespace: 'infra' })],
      want: 'ok',
    },
    { name: 'missing Secret', ref: { name: 'nope' }, objects: [], want: 'InvalidCertificateRef' },
    {
      name: 'unsupported group',
      ref: { group: 'wrong.group.company.io', kind: 'Secret', name: 'web' },
      objects: [tlsSecret('web', { namespace: 'infra' })],
      want: 'InvalidCertificateRef',
    },
    {
      name: 'unsupported kind',
      ref: { kind: 'WrongKind', name: 'web' },
      objects: [tlsSecret('web', { namespace: 'infra' })],
      want: 'InvalidCertificateRef',
    },
    {
      name: 'cross-namespace without grant',
      ref: { name: 'web', namespace: 'certs' },
      objects: [tlsSecret('web', { namespace: 'certs' })],
      want: 'RefNotPermitted',
    },
    {
      name: 'cross-namespace with Gateway grant',
      ref: { name: 'web', namespace: 'certs' },
      objects: [tlsSecret('web', { namespace: 'certs' }), grantFor('Gateway')],
      want: 'ok',
    },
    {
      name: 'cross-namespace missing Secret with grant',
      ref: { name: 'nope', namespace: 'certs' },
      objects: [grantFor('Gateway')],
      want: 'InvalidCertificateRef',
    },
    {
      name: 'ListenerSet with a Gateway grant only',
      owner: lsOwner,
      ref: { name: 'web', namespace: 'certs' },
      objects: [tlsSecret('web', { namespace: 'certs' }), grantFor('Gateway')],
      want: 'RefNotPermitted',
    },
    {
      name: 'ListenerSet with a ListenerSet grant',
      owner: lsOwner,
      ref: { name: 'web', namespace: 'certs' },
      objects: [tlsSecret('web', { namespace: 'certs' }), grantFor('ListenerSet')],
      want: 'ok',
    },
    {
      name: 'Gateway with a ListenerSet grant only',
      ref: { name: 'web', namespace: 'certs' },
      objects: [tlsSecret('web', { namespace: 'certs' }), grantFor('ListenerSet')],
      want: 'RefNotPermitted',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const res = resolveCertificateRef(storeOf(...c.objects), c.owner ?? gwOwner, c.ref);
      assert.equal(res.ok ? 'ok' : res.reason, c.want);
      if (res.ok)
        assert.equal(res.secret.name, `${c.ref.namespace ?? (c.owner ?? gwOwner).namespace}/${c.ref.name}`);
    });
  }

  test('resolveListenerCertificates keeps valid ones in order, reports the first problem, dedups', () => {
    const view = storeOf(
      tlsSecret('b', { namespace: 'infra' }),
      tlsSecret('a', { namespace: 'infra', cert: SELF_CERT, key: SELF_KEY }),
    );
    const res = resolveListenerCertificates(view, gwOwner, [
      { name: 'b' },
      { name: 'missing' },
      { name: 'a' },
      { name: 'b' },
      { name: 'x', namespace: 'other' },
    ]);
    assert.deepEqual(
      res.certificates.map((c) => c.name),
      ['infra/b', 'infra/a'],
    );
    assert.equal(res.problem?.reason, 'InvalidCertificateRef');
    assert.match(res.problem?.message ?? '', /infra\/missing/);
  });
});
