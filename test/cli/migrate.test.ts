import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocuments, renderManifests, renderNotes } from '../../src/cli/migrate';
import { migrateManifests } from '../../src/cli/migrate-rewrite';
import { validateObject } from '../../src/validation';
import type { KubeObject } from '../../src/store/objects';
import { repoRoot } from '../support/repo';

/**
 * Golden test of `convoy migrate` (docs/operations.md §24): test/cli/golden/migrate/input.yaml is
 * migrated without and with --assigned-ports; the manifests and the report are compared with the
 * files next to it. Regenerate with UPDATE_GOLDEN=1 and review every changed line.
 */
const DIR = path.join(repoRoot(), 'test', 'cli', 'golden', 'migrate');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

function golden(name: string, actual: string): void {
  const file = path.join(DIR, name);
  if (UPDATE) fs.writeFileSync(file, actual);
  assert.equal(actual, fs.readFileSync(file, 'utf8'), `${name} differs (UPDATE_GOLDEN=1 regenerates it)`);
}

const input = parseDocuments(fs.readFileSync(path.join(DIR, 'input.yaml'), 'utf8'), 'input.yaml');

for (const [suffix, assignedPorts] of [
  ['default', false],
  ['assigned-ports', true],
] as const) {
  test(`convoy migrate golden (${suffix})`, () => {
    const result = migrateManifests(input, { assignedPorts });
    golden(`${suffix}.out.yaml`, renderManifests(result));
    golden(`${suffix}.report.txt`, renderNotes(result.notes));
    // Every rewritten Gateway API object validates as v1.6.1 would (kubectl apply on the cluster).
    for (const m of result.manifests) {
      if (!m.changed) continue;
      assert.deepEqual(validateObject(m.object as unknown as KubeObject), [], JSON.stringify(m.object));
    }
  });
}

test('convoy migrate: nothing blocked with --assigned-ports except the set without any known port', () => {
  const result = migrateManifests(input, { assignedPorts: true });
  const blocked = result.notes.filter((n) => n.kind === 'blocked').map((n) => n.object);
  assert.deepEqual(blocked, ['XListenerSet apps/team-c']);
  // The route to the blocked set keeps its legacy parentRef.
  const c = result.manifests.find((m) => (m.object.metadata as { name: string }).name === 'c');
  assert.equal(c?.changed, false);
});
