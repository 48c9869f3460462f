import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { KubeApiError } from '../src/kubernetes/client';
import { REPO_ROOT } from './cluster/cluster';
import { GW_API, K8sWorld, cond } from './cluster/k8s-world';
import type { Condition, KObject } from './cluster/k8s-world';

/**
 * ListenerPortRange against a real API server (docs/gateway-api.md §30): the CRD of
 * deploy/03-crd-listenerportrange.yaml installed, invalid policies refused by the API server
 * itself, and the policy status Convoy writes as its ServiceAccount (deploy/01-rbac.yaml) read back.
 */

const NS = 'ranges';
const GROUP = 'gateway.networking.k8s.io';

function policy(name: string, sectionName: string, endPort: number, targetKind = 'Gateway'): KObject {
  return {
    apiVersion: 'gateway.convoy.dev/v1alpha1',
    kind: 'ListenerPortRange',
    metadata: { name, namespace: NS },
    spec: { targetRef: { group: GROUP, kind: targetKind, name: 'gw', sectionName }, endPort },
  };
}

interface Ancestor {
  ancestorRef: Record<string, unknown>;
  controllerName: string;
  conditions: Condition[];
}

const ancestors = (s: Record<string, unknown>) => (s.ancestors as Ancestor[] | undefined) ?? [];
const acceptedOf = (s: Record<string, unknown>) => cond(ancestors(s)[0]?.conditions, 'Accepted');

describe('ListenerPortRange against a real API server', { timeout: 300_000 }, () => {
  let w: K8sWorld;

  before(async () => {
    w = await K8sWorld.create();
    await w.cluster.kubectlOk([
      'apply',
      '-f',
      path.join(REPO_ROOT, 'deploy', '03-crd-listenerportrange.yaml'),
    ]);
    await w.cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    await w.namespace(NS);
    await w.startConvoy();
  });
  after(async () => {
    await w?.dispose();
  });

  test('the API server refuses what the CRD can check', async () => {
    const refused = async (obj: KObject, field: string) => {
      const err = await w.apply(obj).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof KubeApiError, `${JSON.stringify(obj.spec)} was accepted`);
      assert.equal(err.statusCode, 422, err.message);
      assert.match(err.message, new RegExp(field.replace(/\./g, '\\.')), err.message);
    };
    await refused(policy('too-high', 'web', 70000), 'spec.endPort');
    await refused(policy('bad-kind', 'web', 18110, 'HTTPRoute'), 'spec.targetRef.kind');
    const noSection = policy('no-section', 'web', 18110);
    delete (noSection.spec!.targetRef as Record<string, unknown>).sectionName;
    await refused(noSection, 'spec.targetRef.sectionName');
    assert.equal(await w.get('ListenerPortRange', NS, 'too-high'), undefined);
  });

  test('Convoy writes Accepted, Conflicted, Invalid and TargetNotFound with the Gateway listener as ancestor', async () => {
    await w.apply({
      apiVersion: GW_API,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: NS },
      spec: {
        gatewayClassName: 'convoy',
        listeners: [
          { name: 'web', protocol: 'HTTP', port: 18100 },
          { name: 'inside', protocol: 'HTTP', port: 18105, hostname: 'inside.example.com' },
          { name: 'other', protocol: 'HTTP', port: 18200 },
        ],
      },
    });
    await w.apply(policy('wide', 'web', 18119));
    // Created after 'wide', or within the same second (then the name decides): 'wide' has precedence.
    await w.apply(policy('y-second-on-web', 'web', 18101));
    await w.apply(policy('backwards', 'other', 18150));
    await w.apply(policy('ghost', 'nope', 18300));

    const wide = await w.waitStatus(
      'ListenerPortRange',
      NS,
      'wide',
      (s, o) =>
        acceptedOf(s)?.status === 'True' && acceptedOf(s)?.observedGeneration === o.metadata.generation,
      'ListenerPortRange wide Accepted',
    );
    const a = ancestors(wide.status!)[0];
    assert.deepEqual(a.ancestorRef, {
      group: GROUP,
      kind: 'Gateway',
      namespace: NS,
      name: 'gw',
      sectionName: 'web',
    });
    assert.equal(a.controllerName, 'convoy.dev/gateway-controller');
    const managers = (wide.metadata.managedFields as { manager: string; subresource?: string }[]).filter(
      (m) => m.subresource === 'status',
    );
    assert.ok(
      managers.some((m) => m.manager === 'convoy'),
      JSON.stringify(managers),
    );
    for (const [name, reason] of [
      ['y-second-on-web', 'Conflicted'],
      ['backwards', 'Invalid'],
      ['ghost', 'TargetNotFound'],
    ]) {
      await w.waitStatus(
        'ListenerPortRange',
        NS,
        name,
        (s) => acceptedOf(s)?.status === 'False' && acceptedOf(s)?.reason === reason,
        `ListenerPortRange ${name} ${reason}`,
      );
    }
    // The Gateway's listener inside the accepted range lost its port.
    const gw = await w.waitStatus(
      'Gateway',
      NS,
      'gw',
      (s) => {
        const l = (s.listeners as { name: string; conditions: Condition[] }[] | undefined)?.find(
          (x) => x.name === 'inside',
        );
        return cond(l?.conditions, 'Conflicted')?.status === 'True';
      },
      'listener inside the range Conflicted',
    );
    const web = (gw.status!.listeners as { name: string; conditions: Condition[] }[]).find(
      (x) => x.name === 'web',
    );
    assert.equal(cond(web?.conditions, 'Programmed')?.status, 'True');
  });

  test('shrinking the range below the listener frees it: the status follows the new generation', async () => {
    await w.apply(policy('wide', 'web', 18102));
    await w.waitStatus(
      'ListenerPortRange',
      NS,
      'wide',
      (s, o) =>
        acceptedOf(s)?.status === 'True' &&
        acceptedOf(s)?.observedGeneration === o.metadata.generation &&
        /18100-18102/.test(acceptedOf(s)?.message ?? ''),
      'ListenerPortRange wide Accepted at its new generation',
    );
    await w.waitStatus(
      'Gateway',
      NS,
      'gw',
      (s) => {
        const l = (s.listeners as { name: string; conditions: Condition[] }[] | undefined)?.find(
          (x) => x.name === 'inside',
        );
        return cond(l?.conditions, 'Programmed')?.status === 'True';
      },
      'the listener outside the shrunken range Programmed',
    );
  });
});
