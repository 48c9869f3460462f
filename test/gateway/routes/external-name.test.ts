import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../../src/gateway/build';
import {
  OPTS,
  backendRef,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  parentRef,
  storeOf,
} from '../../support/objects';
import type { KubeObject } from '../../../src/store/objects';

function externalService(name: string, externalName: string, port: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { type: 'ExternalName', externalName, ports: [{ name: 'http', port, protocol: 'TCP' }] },
  };
}

function world() {
  return storeOf(
    gatewayClass(),
    gateway('edge', [httpListener('http', 8080)]),
    externalService('ext', 'backend.example.net', 9000),
    httpRoute('r', [{ backendRefs: [backendRef('ext', 9000)] }], { parentRefs: [parentRef('edge')] }),
  );
}

function resolvedRefs(result: ReturnType<typeof buildGateways>) {
  const route = result.statuses.find((s) => s.kind === 'HTTPRoute')!;
  const parents = route.status.parents as {
    conditions: { type: string; status: string; reason: string }[];
  }[];
  return parents[0]!.conditions.find((c) => c.type === 'ResolvedRefs')!;
}

describe('ExternalName Services', () => {
  test('are refused unless the operator enables them', () => {
    const result = buildGateways(world(), OPTS);
    const c = resolvedRefs(result);
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'BackendNotFound');
    assert.equal(result.fleets[0]!.clusters.length, 0);
  });

  test('become a DNS cluster on the Service port when enabled', () => {
    const result = buildGateways(world(), { ...OPTS, externalNameServices: true });
    assert.equal(resolvedRefs(result).status, 'True');
    assert.deepEqual(result.fleets[0]!.clusters, [
      { name: 'default/ext/9000', protocol: 'http1', endpoints: [], externalName: 'backend.example.net' },
    ]);
  });
});
