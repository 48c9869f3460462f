import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FleetModelSource } from '../../../src/fleets/local/model-source';
import { buildGateways } from '../../../src/gateway/build';
import type { BuildOptions } from '../../../src/gateway/resolved';
import {
  OPTS,
  envoyFleet,
  fleetRef,
  gateway,
  gatewayClass,
  httpListener,
  storeOf,
} from '../../support/objects';

const LOCAL: BuildOptions = { ...OPTS, managedFleets: 'local' };

function models(drainTimeout: string) {
  return buildGateways(
    storeOf(
      gatewayClass(),
      envoyFleet('slow', { workload: { drainTimeout, logLevel: 'warning' } }),
      gateway('a', [httpListener('http', 8080)], {
        spec: { infrastructure: { parametersRef: fleetRef('slow') } },
      }),
      gateway('b', [httpListener('http', 8081)]),
    ),
    LOCAL,
  ).fleets;
}

describe('FleetModelSource: the local fleet follows the published models', () => {
  test("Gateways and their parameters' settings; listeners told only on a change", () => {
    const source = new FleetModelSource();
    let told = 0;
    source.onChange(() => told++);
    source.update(models('3s'));
    assert.deepEqual(source.fleets(), ['default/a', 'default/b']);
    assert.deepEqual(source.settingsOf('default/a'), { logLevel: 'warning', drainTimeS: 3 });
    assert.deepEqual(source.settingsOf('default/b'), {}, 'no parameters: the flags');
    assert.equal(told, 1);
    source.update(models('3s'));
    assert.equal(told, 1, 'same Gateways and settings: nothing to do');
    source.update(models('9s'));
    assert.equal(told, 2);
    assert.equal(source.settingsOf('default/a').drainTimeS, 9);
    source.update([]);
    assert.deepEqual(source.fleets(), []);
  });
});
