import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { LocalCluster, REPO_ROOT } from './cluster/cluster';

/** deploy/ is accepted by a real API server (schema, CRD validation, admission, RBAC objects). */
describe('deploy/ against a real API server', { timeout: 120_000 }, () => {
  let cluster: LocalCluster;
  before(async () => {
    cluster = await LocalCluster.start();
  });
  after(async () => {
    await cluster?.teardown();
  });

  test('kubectl apply --dry-run=server -f deploy/ passes', async () => {
    const res = await cluster.kubectl(['apply', '--dry-run=server', '-f', path.join(REPO_ROOT, 'deploy')]);
    assert.equal(res.code, 0, res.stderr);
    for (const expected of [
      'namespace/convoy-system',
      'clusterrole.rbac.authorization.k8s.io/convoy',
      'gatewayclass.gateway.networking.k8s.io/convoy',
      'deployment.apps/convoy',
      'service/convoy-xds',
      'gateway.gateway.networking.k8s.io/convoy-gateway',
      'configmap/convoy-gateway-envoy-bootstrap',
      'service/convoy-gateway-envoy',
    ]) {
      assert.match(res.stdout, new RegExp(`^${expected.replace(/\./g, '\\.')} .*\\(server dry run\\)$`, 'm'));
    }
  });

  test('deploy/managed/ is accepted too (its CRD installed first)', async () => {
    const dir = path.join(REPO_ROOT, 'deploy', 'managed');
    await cluster.kubectlOk(['apply', '-f', path.join(dir, '00-crd-envoyfleet.yaml')]);
    await cluster.kubectlOk([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/envoyfleets.gateway.convoy.dev',
    ]);
    const res = await cluster.kubectl(['apply', '--dry-run=server', '-f', dir]);
    assert.equal(res.code, 0, res.stderr);
    for (const expected of [
      'clusterrole.rbac.authorization.k8s.io/convoy-fleet-provisioner',
      'deployment.apps/convoy',
      'envoyfleet.gateway.convoy.dev/default-fleet',
      'gatewayclass.gateway.networking.k8s.io/convoy-managed',
      'gateway.gateway.networking.k8s.io/web',
    ]) {
      assert.match(res.stdout, new RegExp(`^${expected.replace(/\./g, '\\.')} .*\\(server dry run\\)$`, 'm'));
    }
    // The API server enforces the EnvoyFleet schema.
    const bad = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: [
        'apiVersion: gateway.convoy.dev/v1alpha1',
        'kind: EnvoyFleet',
        'metadata: {name: bad, namespace: convoy-system}',
        'spec: {workload: {kind: StatefulSet}, routability: Internet}',
        '',
      ].join('\n'),
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.workload\.kind/);
    assert.match(bad.stderr, /spec\.routability/);
  });

  test('a broken manifest is refused (the dry run really validates)', async () => {
    const res = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: [
        'apiVersion: gateway.networking.k8s.io/v1',
        'kind: Gateway',
        'metadata: {name: bad, namespace: convoy-system}',
        'spec: {gatewayClassName: convoy, listeners: [{name: http, protocol: HTTP, port: 70000}]}',
        '',
      ].join('\n'),
    });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /port/i);
  });
});
