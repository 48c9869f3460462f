import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, waitFor, type EchoResponse } from './harness';
import {
  CONTROLLER,
  GATEWAY,
  World,
  condition,
  type ConditionEntry,
  type ObjectStatusEntry,
} from './support/world';
import type { XdsDebugState } from '../src/xds/debug-state';

/**
 * Issue 10, row 3: one team's regex that Envoy's RE2 rejects must not cost another team its
 * routes. Team A's HTTPRoute has a path regex over Envoy's RE2 program size limit; team B then
 * adds a route on the same listener (the same RouteConfiguration). B must serve, A must say
 * Accepted=False with UnsupportedValue, and Envoy must never have rejected an update.
 */

const ROUTE_API = 'gateway.networking.k8s.io/v1';
const BAD_REGEX = '/[a-z]{1000}';

function route(name: string, path: { type: string; value: string }, backendName: string): object {
  return {
    apiVersion: ROUTE_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: {
      parentRefs: [{ name: GATEWAY.name, sectionName: 'http' }],
      hostnames: ['shared.example.com'],
      rules: [{ matches: [{ path }], backendRefs: [{ name: backendName, port: 80 }] }],
    },
  };
}

/** The Accepted condition of a route's first parent, if written yet. */
function acceptedOf(s: ObjectStatusEntry): (ConditionEntry & { message: string }) | undefined {
  const parents = s.status.parents as { conditions: unknown }[] | undefined;
  return condition(parents?.[0]?.conditions, 'Accepted') as
    (ConditionEntry & { message: string }) | undefined;
}

describe('a regex Envoy would reject fails only its own route', { concurrency: false }, () => {
  let w: World;
  const get = (path: string) => request({ port: w.ports.http, host: 'shared.example.com', path });

  before(async () => {
    w = await World.create('delta');
    for (const name of ['web', 'team-a', 'team-b']) await w.addBackend(name);
    w.write('00-gateway.yaml', [
      {
        apiVersion: ROUTE_API,
        kind: 'GatewayClass',
        metadata: { name: 'convoy' },
        spec: { controllerName: CONTROLLER },
      },
      {
        apiVersion: ROUTE_API,
        kind: 'Gateway',
        metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace },
        spec: {
          gatewayClassName: 'convoy',
          listeners: [{ name: 'http', protocol: 'HTTP', port: w.ports.http }],
        },
      },
    ]);
    w.write(
      '01-services.yaml',
      ['web', 'team-a', 'team-b'].flatMap((n) => w.serviceDocs(n)),
    );
    w.write('10-base.yaml', [route('base', { type: 'PathPrefix', value: '/' }, 'web')]);
    await w.startConvoy();
    await w.startEnvoy();
    await waitFor(async () => (await get('/')).status === 200, {
      what: 'first request through Envoy',
      timeoutMs: 30_000,
      context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
    });
  });

  after(async () => {
    await w?.dispose();
  });

  test("team A's bad regex is refused on its status; team B's new route serves; Envoy rejected nothing", async () => {
    w.write('20-team-a.yaml', [route('team-a', { type: 'RegularExpression', value: BAD_REGEX }, 'team-a')]);
    const a = await w.waitStatus('HTTPRoute', 'team-a', (s) => acceptedOf(s) !== undefined, 'team A status');
    const accepted = acceptedOf(a)!;
    assert.equal(accepted.status, 'False');
    assert.equal(accepted.reason, 'UnsupportedValue');
    assert.match(
      accepted.message,
      /path regular expression "\/\[a-z\]\{1000\}": RE2 program size 1005 exceeds Envoy's limit of 100/,
    );

    w.write('21-team-b.yaml', [route('team-b', { type: 'PathPrefix', value: '/b' }, 'team-b')]);
    const b = await waitFor(
      async () => {
        const r = await get('/b/x');
        return r.status === 200 && r.json<EchoResponse>().backend === 'team-b' ? r : undefined;
      },
      { what: "team B's new route served", timeoutMs: 20_000, context: () => w.envoy.logContext(20) },
    );
    assert.equal(b.status, 200);
    assert.equal(acceptedOf((await w.statusOf('HTTPRoute', 'team-b'))!)?.status, 'True');
    // Team A's path falls through to the base route; nothing of team A reached Envoy.
    assert.equal((await get('/' + 'a'.repeat(1000))).json<EchoResponse>().backend, 'web');

    const rejected = [...(await w.envoy.stats('update_rejected')).entries()].filter(([, v]) => v !== 0);
    assert.deepEqual(rejected, [], 'Envoy rejected no xDS update');
    const debug = await w.convoy.getJson<XdsDebugState>('/debug/xds');
    assert.ok(debug.streams.length > 0);
    for (const stream of debug.streams) {
      for (const [type, t] of Object.entries(stream.types)) {
        assert.notEqual(t.state, 'nacked', `${type} NACKed: ${JSON.stringify(t.lastNack)}`);
        assert.equal(t.lastNack, undefined, `${type} was NACKed`);
      }
    }
  });
});
