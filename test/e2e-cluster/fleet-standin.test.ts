import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fleetPorts } from '../../e2e/conformance/fleet-standin';
import { firstReason, resultsTable } from '../../e2e/conformance/traffic';

const gw = {
  metadata: { name: 'edge', namespace: 'infra', uid: 'u' },
  spec: { gatewayClassName: 'convoy', listeners: [{ port: 443 }, { port: 80 }, { port: 80 }] },
};
const set = (name: string, namespace: string, parentRef: Record<string, string>, ports: number[]) => ({
  metadata: { name, namespace },
  spec: { parentRef: parentRef as { name: string }, listeners: ports.map((port) => ({ port })) },
});

test("fleetPorts: the Gateway's ports plus those of ListenerSets attached to it, once each, ascending", () => {
  const sets = [
    set('a', 'infra', { name: 'edge' }, [8080, 80]),
    set('b', 'apps', { name: 'edge', namespace: 'infra' }, [9090]),
    set('c', 'apps', { name: 'edge' }, [7070]), // parent defaults to its own namespace: apps/edge
    set('d', 'infra', { name: 'other' }, [6060]),
    set('e', 'infra', { name: 'edge', kind: 'Service', group: '' }, [5050]),
  ];
  assert.deepEqual(fleetPorts(gw, sets), [80, 443, 8080, 9090]);
  assert.deepEqual(fleetPorts({ ...gw, spec: { gatewayClassName: 'convoy' } }, []), []);
});

test('resultsTable counts outcomes and gives each non-passing test the first line of its reason', () => {
  const table = resultsTable([
    { name: 'A', outcome: 'PASS', seconds: 1, output: [] },
    {
      name: 'B',
      outcome: 'FAIL',
      seconds: 2,
      output: [
        '=== RUN   TestConformance/B',
        '    helpers.go:1: Error:      \tReceived unexpected error: a|b',
        '    more',
      ],
    },
    {
      name: 'C',
      outcome: 'SKIP',
      seconds: 0,
      output: ['    conformance.go:56: Skipping C: suite does not support X'],
    },
  ]);
  assert.match(table, /^1 passed, 1 failed, 1 skipped\n/);
  assert.match(table, /\| B \| FAIL \| 2 \| Error: +\tReceived unexpected error: a\\\|b \|/);
  assert.match(table, /\| C \| SKIP \| 0 \| Skipping C: suite does not support X \|/);
  assert.equal(firstReason({ name: 'A', outcome: 'PASS', seconds: 1, output: [] }), '');
});
