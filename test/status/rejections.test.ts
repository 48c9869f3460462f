import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGateways } from '../../src/gateway/build';
import { applyRejections, emptyRejections } from '../../src/status/rejections';
import type { ObjectRejections, RejectionNote } from '../../src/status/rejections';
import { mergeStatus } from '../../src/status/merge';
import type { Condition, ObjectStatus } from '../../src/status/types';
import { statusKey } from '../../src/status/types';
import {
  NOW,
  OPTS,
  backendRef,
  backendService,
  condSummary,
  gateway,
  gatewayClass,
  httpListener,
  httpRoute,
  httpsListener,
  listenerSet,
  parentRef,
  routeParents,
  storeOf,
  tlsSecret,
} from '../support/objects';

const LATER = '2026-03-01T12:05:00Z';
const bindNote: RejectionNote = {
  resource: 'Listener https-443',
  rejectedBy: 1,
  envoys: 2,
  message: "cannot bind '0.0.0.0:443': Address already in use",
};

function built(): ObjectStatus[] {
  return buildGateways(
    storeOf(
      gatewayClass(),
      gateway('gw', [httpListener('http', 80), httpsListener('https', 443, 'a.example.com', 'a-cert')], {
        allowedListeners: { namespaces: { from: 'Same' } },
      }),
      listenerSet('tenant', { name: 'gw' }, [httpsListener('web', 443, 'b.example.com', 'b-cert')]),
      tlsSecret('a-cert', { hostnames: ['a.example.com'] }),
      tlsSecret('b-cert', { hostnames: ['b.example.com'] }),
      ...backendService('web', 80, ['10.0.0.1']),
      httpRoute('site', [{ backendRefs: [backendRef('web', 80)] }], {
        parentRefs: [parentRef('gw', { sectionName: 'http' })],
      }),
    ),
    OPTS,
  ).statuses;
}

const find = (statuses: ObjectStatus[], key: string) => statuses.find((s) => statusKey(s) === key)!;
const conditions = (s: ObjectStatus) => s.status.conditions as Condition[];
const listener = (s: ObjectStatus, name: string) =>
  (s.status.listeners as { name: string; conditions: Condition[] }[]).find((l) => l.name === name)!;
const cond = (list: Condition[], type: string) => list.find((c) => c.type === type);

function notes(f: (r: ObjectRejections) => void): ObjectRejections {
  const r = emptyRejections();
  f(r);
  return r;
}

describe('rejections laid over statuses (src/status/rejections.ts)', () => {
  test('no rejection: the very same statuses', () => {
    const statuses = built();
    assert.equal(applyRejections(statuses, emptyRejections(), LATER), statuses);
  });

  test('a rejected listener is not programmed; its Gateway says so and stays programmed while others serve', () => {
    const statuses = built();
    const out = applyRejections(
      statuses,
      notes((r) => r.listeners.set('Gateway/default/gw', new Map([['https', [bindNote]]]))),
      LATER,
    );
    const gw = find(out, 'Gateway/default/gw');
    const https = listener(gw, 'https');
    assert.deepEqual(cond(https.conditions, 'Programmed'), {
      type: 'Programmed',
      status: 'False',
      reason: 'Invalid',
      message: "rejected by 1 of 2 Envoys of the fleet: cannot bind '0.0.0.0:443': Address already in use",
      observedGeneration: 1,
      lastTransitionTime: LATER,
    });
    assert.deepEqual(cond(https.conditions, 'convoy.dev/EnvoyRejected'), {
      type: 'convoy.dev/EnvoyRejected',
      status: 'True',
      reason: 'Rejected',
      message:
        "Listener https-443 rejected by 1 of 2 Envoys of the fleet: cannot bind '0.0.0.0:443': Address already in use",
      observedGeneration: 1,
      lastTransitionTime: LATER,
    });
    assert.deepEqual(
      condSummary(listener(gw, 'http').conditions),
      condSummary(listener(find(statuses, 'Gateway/default/gw'), 'http').conditions),
    );
    assert.deepEqual(condSummary(conditions(gw)), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'convoy.dev/EnvoyRejected=True/Rejected',
    ]);
    assert.match(
      cond(conditions(gw), 'convoy.dev/EnvoyRejected')!.message,
      /^listener https: Listener https-443 rejected by 1 of 2/,
    );
    // Everything else is untouched, down to object identity.
    for (const s of out)
      if (statusKey(s) !== 'Gateway/default/gw') assert.equal(s, find(statuses, statusKey(s)));
  });

  test('when every programmed listener is rejected, the object is not programmed', () => {
    const out = applyRejections(
      built(),
      notes((r) => r.listeners.set('ListenerSet/default/tenant', new Map([['web', [bindNote]]]))),
      LATER,
    );
    const set = find(out, 'ListenerSet/default/tenant');
    assert.deepEqual(condSummary(conditions(set)), [
      'Accepted=True/Accepted',
      'Programmed=False/Invalid',
      'convoy.dev/EnvoyRejected=True/Rejected',
    ]);
    assert.equal(
      cond(conditions(set), 'Programmed')!.message,
      'every programmed listener is rejected by Envoys of the fleet: web',
    );
  });

  test('two rejected resources of one listener are both told', () => {
    const secret: RejectionNote = {
      resource: 'Secret default/b-cert',
      rejectedBy: 2,
      envoys: 2,
      message: 'bad key',
    };
    const out = applyRejections(
      built(),
      notes((r) => r.listeners.set('ListenerSet/default/tenant', new Map([['web', [bindNote, secret]]]))),
      LATER,
    );
    const web = listener(find(out, 'ListenerSet/default/tenant'), 'web');
    assert.equal(
      cond(web.conditions, 'Programmed')!.message,
      "Listener https-443 rejected by 1 of 2 Envoys of the fleet: cannot bind '0.0.0.0:443': Address already in use; " +
        'Secret default/b-cert rejected by 2 of 2 Envoys of the fleet: bad key',
    );
  });

  test('a listener the build did not program is left as the build said', () => {
    const statuses = built().map((s) =>
      statusKey(s) !== 'ListenerSet/default/tenant'
        ? s
        : {
            ...s,
            status: {
              ...s.status,
              listeners: [
                {
                  name: 'web',
                  conditions: [
                    {
                      type: 'Programmed',
                      status: 'False',
                      reason: 'Invalid',
                      message: 'no cert',
                      lastTransitionTime: NOW,
                    },
                  ],
                },
              ],
            },
          },
    );
    const out = applyRejections(
      statuses,
      notes((r) => r.listeners.set('ListenerSet/default/tenant', new Map([['web', [bindNote]]]))),
      LATER,
    );
    assert.equal(find(out, 'ListenerSet/default/tenant'), find(statuses, 'ListenerSet/default/tenant'));
  });

  test("a route gets the condition on its parent entries of the rejecting fleet's objects only", () => {
    const note: RejectionNote = {
      resource: 'Cluster default/web/80',
      rejectedBy: 1,
      envoys: 1,
      message: 'bad',
    };
    const out = applyRejections(
      built(),
      notes((r) =>
        r.routes.set('HTTPRoute/default/site', [{ parents: new Set(['Gateway/default/gw']), notes: [note] }]),
      ),
      LATER,
    );
    const parents = routeParents(out, 'HTTPRoute', 'site')!;
    assert.deepEqual(condSummary(parents[0].conditions), [
      'Accepted=True/Accepted',
      'ResolvedRefs=True/ResolvedRefs',
      'convoy.dev/EnvoyRejected=True/Rejected',
    ]);
    const other = applyRejections(
      built(),
      notes((r) =>
        r.routes.set('HTTPRoute/default/site', [{ parents: new Set(['Gateway/other/gw']), notes: [note] }]),
      ),
      LATER,
    );
    assert.deepEqual(routeParents(other, 'HTTPRoute', 'site'), routeParents(built(), 'HTTPRoute', 'site'));
  });

  test('a rejection no listener or route owns is told on the Gateway, which stays programmed', () => {
    const note: RejectionNote = { resource: 'Cluster default/x/1', rejectedBy: 1, envoys: 1, message: 'bad' };
    const out = applyRejections(
      built(),
      notes((r) => r.objects.set('Gateway/default/gw', [note])),
      LATER,
    );
    assert.deepEqual(condSummary(conditions(find(out, 'Gateway/default/gw'))), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'convoy.dev/EnvoyRejected=True/Rejected',
    ]);
  });

  test('once cleared, merging the plain build status removes the condition and restores Programmed', () => {
    const statuses = built();
    const key = 'Gateway/default/gw';
    const rejected = find(
      applyRejections(
        statuses,
        notes((r) => r.listeners.set(key, new Map([['https', [bindNote]]]))),
        LATER,
      ),
      key,
    );
    const merged = mergeStatus(rejected, find(statuses, key));
    assert.deepEqual(condSummary(conditions(merged)), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
    ]);
    assert.deepEqual(
      condSummary(listener(merged, 'https').conditions),
      condSummary(listener(find(statuses, key), 'https').conditions),
    );
  });
});
