import { after, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Listing, WalkLimits } from '../../../src/providers/files/walk';
import { DEFAULT_WALK_LIMITS, listFiles, relativeName } from '../../../src/providers/files/walk';

let dir: string;
const outside: string[] = [];

async function put(rel: string, content = 'kind: Namespace\n'): Promise<void> {
  const p = join(dir, rel);
  await mkdir(dirname(p), { recursive: true });
  await writeFile(p, content);
}

const names = (l: Listing) => l.files.map((f) => relativeName(dir, f));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-walk-'));
  outside.push(dir);
});
after(async () => {
  for (const d of outside) await rm(d, { recursive: true, force: true });
});

describe('listFiles stays inside its directory', () => {
  test('a symlink to / is refused with one problem; nothing behind it is read or watched', async () => {
    await put('a.yaml');
    await symlink('/', join(dir, 'root'));
    const l = await listFiles(dir);
    assert.deepEqual(names(l), ['a.yaml']);
    assert.deepEqual(l.problems, [
      { file: 'root', message: `symlink to / leads outside ${dir}; not followed` },
    ]);
    assert.deepEqual([...l.dirs], [dir]);
  });

  test('symlinks to files and directories outside are refused; inside they are followed once', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'convoy-walk-outside-'));
    outside.push(elsewhere);
    await writeFile(join(elsewhere, 'secret.yaml'), 'kind: Secret\n');
    await symlink(join(elsewhere, 'secret.yaml'), join(dir, 'stolen.yaml'));
    await symlink(elsewhere, join(dir, 'elsewhere'));
    await symlink('/etc/hostname', join(dir, 'notes.txt')); // not a file Convoy reads: ignored
    await symlink('/nonexistent/x.yaml', join(dir, 'dangling.yaml')); // leads nowhere: ignored
    await put('real/inner/b.yaml');
    await symlink('real/inner/b.yaml', join(dir, 'alias.yaml'));
    await symlink('real', join(dir, 'again'));
    await symlink('..', join(dir, 'real', 'up'));
    const l = await listFiles(dir);
    // real/ is walked once, under the name reached first (again/, a symlink to it).
    assert.deepEqual(names(l), ['again/inner/b.yaml', 'alias.yaml']);
    assert.deepEqual(
      l.problems.map((p) => p.file),
      ['elsewhere', 'stolen.yaml'],
    );
    for (const p of l.problems) assert.match(p.message, /leads outside .*; not followed$/);
  });

  test('a directory reached through a symlink inside is walked once, under the first name', async () => {
    await put('a/x.yaml');
    await symlink('a', join(dir, 'b'));
    const l = await listFiles(dir);
    assert.deepEqual(names(l), ['a/x.yaml']);
    assert.deepEqual(l.problems, []);
  });
});

describe('listFiles limits', () => {
  test('directories deeper than the limit are reported once and not read', async () => {
    await put('top.yaml');
    await put('1/2/ok.yaml');
    await put('1/2/3/deep.yaml');
    const limits: WalkLimits = { ...DEFAULT_WALK_LIMITS, maxDepth: 2 };
    const l = await listFiles(dir, limits);
    assert.deepEqual(names(l), ['1/2/ok.yaml', 'top.yaml']);
    assert.deepEqual(l.problems, [
      { file: '1/2/3', message: 'directory nested more than 2 levels deep; not read (--from-dir-max-depth)' },
    ]);
  });

  test('past the entry limit the walk stops, reports once, and marks the rest as unseen', async () => {
    for (let i = 0; i < 20; i++) await put(`f${String(i).padStart(2, '0')}.yaml`);
    const l = await listFiles(dir, { ...DEFAULT_WALK_LIMITS, maxEntries: 5 });
    assert.deepEqual(names(l), ['f00.yaml', 'f01.yaml', 'f02.yaml', 'f03.yaml', 'f04.yaml']);
    assert.equal(l.problems.length, 1);
    assert.equal(l.problems[0].file, 'f05.yaml');
    assert.match(l.problems[0].message, /^more than 5 files and directories/);
    assert.equal(l.unseen('f07.yaml'), true);
    assert.equal(l.unseen('f03.yaml'), false);
    assert.equal((await listFiles(dir)).unseen('f07.yaml'), false);
  });
});

describe('listFiles: an unreadable sub-directory', () => {
  test('is one problem, is not watched, and what it held is unseen rather than gone', async () => {
    await put('a.yaml');
    await put('locked/b.yaml');
    await chmod(join(dir, 'locked'), 0o000);
    let l: { files: string[]; dirs: string[]; problems: unknown[]; unseen: boolean[] };
    if (process.getuid?.() === 0) {
      // root reads any directory: list as an unprivileged user instead.
      await chmod(dir, 0o755);
      // The child runs a copy of the built sources from a directory user nobody can read: the
      // checkout itself may sit below a directory only root may enter (e.g. a `mktemp -d` clone).
      const copy = await mkdtemp(join(tmpdir(), 'convoy-walk-src-'));
      await chmod(copy, 0o755);
      const builtSrc = dirname(dirname(dirname(require.resolve('../../../src/providers/files/walk'))));
      cpSync(builtSrc, join(copy, 'src'), { recursive: true });
      const walk = join(copy, 'src', 'providers', 'files', 'walk.js');
      // And of the Node binary: the runtime under test may also live below a root-only directory
      // (Node 24 in the user's cache).
      const node = join(copy, 'node');
      cpSync(process.execPath, node);
      await chmod(node, 0o755);
      const script = `require(${JSON.stringify(walk)}).listFiles(${JSON.stringify(dir)}).then((l) =>
        console.log(JSON.stringify({ files: l.files, dirs: [...l.dirs], problems: l.problems,
          unseen: [l.unseen('locked/b.yaml'), l.unseen('a.yaml')] })))`;
      const r = spawnSync(node, ['-e', script], { cwd: copy, uid: 65534, gid: 65534, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr || String(r.error));
      await rm(copy, { recursive: true, force: true });
      l = JSON.parse(r.stdout) as typeof l;
    } else {
      const listing = await listFiles(dir);
      l = {
        files: listing.files,
        dirs: [...listing.dirs],
        problems: listing.problems,
        unseen: [listing.unseen('locked/b.yaml'), listing.unseen('a.yaml')],
      };
    }
    await chmod(join(dir, 'locked'), 0o755);
    assert.deepEqual(l.files, [join(dir, 'a.yaml')]);
    assert.deepEqual(l.dirs, [dir]);
    assert.deepEqual(l.problems, [{ file: 'locked', message: 'cannot read directory: EACCES' }]);
    assert.deepEqual(l.unseen, [true, false]);
  });
});
