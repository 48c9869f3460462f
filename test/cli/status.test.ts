import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderProblems, renderStatusTable } from '../../src/cli/status';
import type { StatusObject } from '../../src/cli/status';

const cond = (type: string, status: string, reason = 'Ok', message = '', observedGeneration = 1) => ({
  type,
  status,
  reason,
  message,
  observedGeneration,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

const objects: StatusObject[] = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { namespace: 'apps', name: 'web', generation: 1 },
    status: {
      parents: [
        {
          parentRef: { name: 'gw', namespace: 'infra', sectionName: 'http' },
          controllerName: 'convoy.dev/gateway-controller',
          conditions: [
            cond('Accepted', 'True'),
            cond('ResolvedRefs', 'False', 'BackendNotFound', 'service apps/missing not found'),
          ],
        },
      ],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { namespace: 'infra', name: 'gw', generation: 2 },
    status: {
      conditions: [
        cond('Accepted', 'True', 'Accepted', '', 2),
        cond('Programmed', 'True', 'Programmed', '', 1),
      ],
      listeners: [
        {
          name: 'http',
          attachedRoutes: 1,
          conditions: [
            cond('Accepted', 'True', 'Accepted', '', 2),
            cond('Conflicted', 'False', 'NoConflicts', '', 2),
          ],
        },
        {
          name: 'https',
          attachedRoutes: 0,
          conditions: [cond('Conflicted', 'True', 'HostnameConflict', 'same hostname as http', 2)],
        },
      ],
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'convoy', generation: 1 },
    status: { conditions: [cond('Accepted', 'True')] },
  },
];

describe('convoy status table', () => {
  const text = renderStatusTable(objects);
  const lines = text.split('\n');

  test('header has the well-known conditions first, then the rest', () => {
    assert.match(
      lines[0],
      /^KIND\s+NAMESPACE\s+NAME\s+LISTENER\/PARENT\s+ACCEPTED\s+PROGRAMMED\s+RESOLVEDREFS\s+CONFLICTED\s+INFO$/,
    );
  });

  test('GatewayClass, then Gateway with a row per listener, then routes per parent', () => {
    assert.match(lines[1], /^GatewayClass\s+-\s+convoy\s+-\s+True\s+-\s+-\s+-$/);
    assert.match(lines[2], /^Gateway\s+infra\s+gw\s+-\s+True\s+True \[stale\]\s+-\s+-$/);
    assert.match(lines[3], /^Gateway\s+infra\s+gw\s+listener http\s+True\s+-\s+-\s+False\s+routes: 1$/);
    assert.match(
      lines[4],
      /^Gateway\s+infra\s+gw\s+listener https\s+-\s+-\s+-\s+True \(HostnameConflict\)\s+routes: 0$/,
    );
    assert.match(
      lines[5],
      /^HTTPRoute\s+apps\s+web\s+Gateway\/infra\/gw\/http\s+True\s+-\s+False \(BackendNotFound\)\s+-$/,
    );
  });

  test('lists unhealthy conditions with messages, honouring negative polarity', () => {
    const problems = text.slice(text.indexOf('Problems:'));
    assert.match(
      problems,
      /Gateway infra\/gw listener https: Conflicted=True HostnameConflict: same hostname as http/,
    );
    assert.match(
      problems,
      /HTTPRoute apps\/web Gateway\/infra\/gw\/http: ResolvedRefs=False BackendNotFound: service apps\/missing not found/,
    );
    assert.doesNotMatch(problems, /Conflicted=False/);
    assert.equal(problems.trim().split('\n').length, 3);
  });

  test("Envoy's rejections are problems: convoy.dev/EnvoyRejected=True is the unhealthy state", () => {
    const rejected = renderStatusTable([
      {
        kind: 'ListenerSet',
        metadata: { namespace: 'team', name: 'shop', generation: 1 },
        status: {
          conditions: [
            cond('Programmed', 'True'),
            cond('convoy.dev/EnvoyRejected', 'True', 'Rejected', 'port taken'),
          ],
        },
      },
    ]);
    assert.match(
      rejected,
      /Problems:\n.*ListenerSet team\/shop: convoy.dev\/EnvoyRejected=True Rejected: port taken/,
    );
  });

  test('empty input and file problems', () => {
    assert.equal(renderStatusTable([]), 'No objects.\n');
    assert.equal(renderProblems([]), '');
    assert.equal(
      renderProblems([{ file: 'routes.yaml', line: 3, message: 'bad indent' }, 'plain text']),
      '\nInput problems:\n  routes.yaml:3: bad indent\n  plain text\n',
    );
  });
});
