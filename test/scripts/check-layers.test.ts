import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../support/repo';

/** The dependency rule (scripts/check-layers.js) on the real src/ and on synthetic trees. */

const SCRIPT = path.join(repoRoot(), 'scripts', 'check-layers.js');

function check(root: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, '--root', root], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

/** Writes a throwaway tree of src/ files (path → text) and returns its root. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-layers-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

describe('scripts/check-layers.js', () => {
  test("the repository's own src/ keeps the rule", () => {
    const r = check(repoRoot());
    assert.equal(r.status, 0, r.stderr);
  });

  test('an upward import fails and is named with its file and line', () => {
    const root = tree({
      'src/observability/logger.ts': "export const a = 1;\nimport { TypeUrl } from '../xds/types';\n",
      'src/xds/types.ts': 'export const TypeUrl = {};\n',
    });
    const r = check(root);
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /src\/observability\/logger\.ts:2: '\.\.\/xds\/types': src\/observability \(rank 1\) may not import src\/xds \(rank 6\)/,
    );
  });

  test('type-only, re-exported and dynamic imports count; comments do not', () => {
    const cases = [
      "import type { T } from '../controller/controller';",
      "export { T } from '../controller/controller';",
      "export async function f() { return import('../controller/controller'); }",
    ];
    for (const text of cases) {
      const r = check(tree({ 'src/xds/a.ts': text + '\n', 'src/controller/controller.ts': '' }));
      assert.equal(r.status, 1, text);
    }
    const commented = tree({
      'src/xds/a.ts': "// import { T } from '../controller/controller';\nexport const a = 1;\n",
      'src/controller/controller.ts': '',
    });
    assert.equal(check(commented).status, 0);
  });

  test('a folder may import itself and lower ranks, not a sibling of the same rank', () => {
    const ok = tree({
      'src/xds/a.ts':
        "import { b } from './sub/b';\nimport { E } from '../envoy';\nimport { u } from '../util/u';\n",
      'src/xds/sub/b.ts': "import { a } from '../a';\nexport const b = a;\n",
      'src/envoy/index.ts': '',
      'src/util/u.ts': '',
    });
    assert.equal(check(ok).status, 0, check(ok).stderr);
    const sibling = tree({
      'src/envoy/a.ts': "import { g } from '../gateway/build';\n",
      'src/gateway/build.ts': '',
    });
    assert.match(check(sibling).stderr, /src\/envoy \(rank 5\) may not import src\/gateway \(rank 5\)/);
  });

  test('a folder without a rank, and an import leaving src/, fail', () => {
    assert.match(check(tree({ 'src/newthing/a.ts': '' })).stderr, /src\/newthing has no rank/);
    assert.match(check(tree({ 'src/xds/a.ts': "import '../../test/x';\n" })).stderr, /outside src\//);
  });
});
