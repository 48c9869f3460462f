import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isReferenceAllowed } from '../../src/gateway/referencegrants';
import type { ReferenceGrantSpec } from '../../src/gateway/api';
import { referenceGrant, storeOf } from '../support/objects';

const G = 'gateway.networking.k8s.io';
const fromGateway = { group: G, kind: 'Gateway', namespace: 'infra' };
const toSecret = { group: '', kind: 'Secret', namespace: 'certs', name: 'web' };
const good: ReferenceGrantSpec = {
  from: [{ group: G, kind: 'Gateway', namespace: 'infra' }],
  to: [{ group: '', kind: 'Secret' }],
};

describe('isReferenceAllowed', () => {
  const cases: {
    name: string;
    grantNs?: string;
    spec?: ReferenceGrantSpec;
    from?: typeof fromGateway;
    to?: typeof toSecret;
    want: boolean;
  }[] = [
    { name: 'same namespace needs no grant', to: { ...toSecret, namespace: 'infra' }, want: true },
    { name: 'cross namespace without a grant', want: false },
    { name: 'grant for all Secrets', spec: good, want: true },
    {
      name: 'grant naming this Secret',
      spec: { ...good, to: [{ group: '', kind: 'Secret', name: 'web' }] },
      want: true,
    },
    {
      name: 'grant naming another Secret',
      spec: { ...good, to: [{ group: '', kind: 'Secret', name: 'other' }] },
      want: false,
    },
    { name: 'grant in the wrong namespace', grantNs: 'infra', spec: good, want: false },
    {
      name: 'wrong from group',
      spec: { ...good, from: [{ group: 'example.io', kind: 'Gateway', namespace: 'infra' }] },
      want: false,
    },
    {
      name: 'wrong from kind',
      spec: { ...good, from: [{ group: G, kind: 'HTTPRoute', namespace: 'infra' }] },
      want: false,
    },
    {
      name: 'wrong from namespace',
      spec: { ...good, from: [{ group: G, kind: 'Gateway', namespace: 'other' }] },
      want: false,
    },
    { name: 'wrong to group', spec: { ...good, to: [{ group: 'example.io', kind: 'Secret' }] }, want: false },
    { name: 'wrong to kind', spec: { ...good, to: [{ group: '', kind: 'ConfigMap' }] }, want: false },
    {
      name: 'Gateway grant does not cover a ListenerSet',
      spec: good,
      from: { group: G, kind: 'ListenerSet', namespace: 'infra' },
      want: false,
    },
    {
      name: 'ListenerSet grant does not cover a Gateway',
      spec: { ...good, from: [{ group: G, kind: 'ListenerSet', namespace: 'infra' }] },
      want: false,
    },
    {
      name: 'ListenerSet grant covers the ListenerSet',
      spec: { ...good, from: [{ group: G, kind: 'ListenerSet', namespace: 'infra' }] },
      from: { group: G, kind: 'ListenerSet', namespace: 'infra' },
      want: true,
    },
    {
      name: 'one matching entry among several',
      spec: {
        from: [
          { group: G, kind: 'HTTPRoute', namespace: 'apps' },
          { group: G, kind: 'Gateway', namespace: 'infra' },
        ],
        to: [
          { group: '', kind: 'Service' },
          { group: '', kind: 'Secret', name: 'web' },
        ],
      },
      want: true,
    },
    {
      name: 'route to Service grant',
      spec: {
        from: [{ group: G, kind: 'HTTPRoute', namespace: 'apps' }],
        to: [{ group: '', kind: 'Service' }],
      },
      from: { group: G, kind: 'HTTPRoute', namespace: 'apps' },
      to: { group: '', kind: 'Service', namespace: 'certs', name: 'svc' },
      want: true,
    },
    { name: 'empty grant', spec: {}, want: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const view = c.spec
        ? storeOf(referenceGrant('g', c.spec, { namespace: c.grantNs ?? 'certs' }))
        : storeOf();
      assert.equal(isReferenceAllowed(view, c.from ?? fromGateway, c.to ?? toSecret), c.want);
    });
  }
});
