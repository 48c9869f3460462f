import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MissingReferenceError, expandReferences, resolveEnv } from '../../e2e/cluster/pod-env';

const pod = {
  metadata: {
    name: 'web-1',
    namespace: 'apps',
    uid: 'u-1',
    labels: { app: 'web' },
    annotations: { team: 'edge' },
  },
  spec: { nodeName: 'convoy-node', serviceAccountName: 'default' },
  status: { podIP: '192.0.2.10', podIPs: [{ ip: '192.0.2.10' }], hostIP: '192.0.2.1' },
};
const sources = {
  configMap: (n: string) => (n === 'cm' ? { colour: 'blue', size: 'L' } : undefined),
  secret: (n: string) => (n === 'sec' ? { token: 't0k' } : undefined),
};

test('resolveEnv reads values, fieldRefs, ConfigMap and Secret keys, and envFrom with a prefix; later entries win', () => {
  const env = resolveEnv(
    pod,
    [
      { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: 'TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['team']" } } },
      { name: 'C', valueFrom: { configMapKeyRef: { name: 'cm', key: 'colour' } } },
      { name: 'S', valueFrom: { secretKeyRef: { name: 'sec', key: 'token' } } },
      { name: 'OPT', valueFrom: { secretKeyRef: { name: 'absent', key: 'x', optional: true } } },
      { name: 'X_size', value: 'overridden' },
      { name: 'URL', value: 'http://$(IP):3000/$(POD)?$$(POD)&$(UNKNOWN)' },
    ],
    [{ configMapRef: { name: 'cm' }, prefix: 'X_' }],
    sources,
  );
  assert.deepEqual(Object.fromEntries(env), {
    X_colour: 'blue',
    X_size: 'overridden',
    POD: 'web-1',
    NS: 'apps',
    IP: '192.0.2.10',
    APP: 'web',
    TEAM: 'edge',
    C: 'blue',
    S: 't0k',
    URL: 'http://192.0.2.10:3000/web-1?$(POD)&$(UNKNOWN)',
  });
});

test('resolveEnv refuses a missing required reference and an unsupported fieldPath', () => {
  assert.throws(
    () =>
      resolveEnv(
        pod,
        [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nope' } } }],
        undefined,
        sources,
      ),
    (e: Error) =>
      e instanceof MissingReferenceError && /key "nope" not found in configmap "cm"/.test(e.message),
  );
  assert.throws(
    () => resolveEnv(pod, undefined, [{ secretRef: { name: 'gone' } }], sources),
    /secret "gone" not found/,
  );
  assert.throws(
    () =>
      resolveEnv(
        pod,
        [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }],
        undefined,
        sources,
      ),
    /unsupported fieldRef/,
  );
  assert.equal(expandReferences('$(A)$(B)', new Map([['A', '1']])), '1$(B)');
});
