import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { ConvoyProcess, request, sleep, tempDir, waitFor, type EchoResponse } from './harness';
import { GATEWAY, GATEWAY_API, World, gatewayDocs } from './support/world';

/**
 * Issue 10 rows 5, 6 and 12 with a real `convoy serve --from-dir`: hostile or careless files
 * (huge, alias bombs, a symlink to /, an unreadable sub-directory, a file written in two
 * steps) are reported in /status/problems while the admin server keeps answering, and a real
 * Envoy keeps serving the last good routes.
 */

interface Problem {
  file: string;
  document?: number;
  message: string;
}

const API = GATEWAY_API;
/** When the tests run as root, Convoy runs as nobody, so that permissions apply to it. */
const unprivileged = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

function gatewayYaml(httpPort: number): string {
  return gatewayDocs([{ name: 'http', protocol: 'HTTP', port: httpPort }])
    .map((d) => stringify(d))
    .join('---\n');
}

/** A Service with `n` labels: slow to parse however it is done, and over 1 MiB for n ≥ 120k. */
function manyLabels(n: number): string {
  const lines = ['apiVersion: v1', 'kind: Service', 'metadata:', '  name: many', '  labels:'];
  for (let i = 0; i < n; i++) lines.push(`    k${i}: v`);
  return `${lines.join('\n')}\nspec:\n  ports:\n  - port: 80\n`;
}

/** Nine levels of nine aliases each: a billion strings if expanded. */
function aliasBomb(): string {
  const lines = ['apiVersion: v1', 'kind: Service', 'metadata:', '  name: bomb', 'spec:'];
  lines.push('  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]');
  for (let i = 1; i < 10; i++) {
    const name = String.fromCharCode(97 + i);
    lines.push(
      `  ${name}: &${name} [${Array(9)
        .fill(`*${String.fromCharCode(96 + i)}`)
        .join(',')}]`,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('file mode: hostile and careless files', { concurrency: false }, () => {
  let dir: string;
  let cleanup: () => void;
  let convoy: ConvoyProcess;

  /** Writes a file atomically (a dot-named temporary file, then rename), as the README asks. */
  const write = (file: string, text: string) => {
    const target = path.join(dir, file);
    fs.writeFileSync(path.join(dir, `.${file}.tmp`), text);
    fs.renameSync(path.join(dir, `.${file}.tmp`), target);
  };
  const problems = () => convoy.getJson<Problem[]>('/status/problems');

  before(async () => {
    ({ dir, cleanup } = tempDir('files-robustness'));
    fs.chmodSync(dir, 0o755);
    write('00-gateway.yaml', gatewayYaml(18080));
    // No Envoy here, and user nobody cannot write the harness's xDS certificate folder: plaintext
    // xDS on loopback, asked for by name.
    convoy = await ConvoyProcess.start({
      name: 'convoy-files',
      args: ['--from-dir', dir, '--insecure-plaintext-xds'],
      ...unprivileged,
    });
    assert.deepEqual(await problems(), []);
  });

  after(async () => {
    await convoy?.dispose();
    for (const d of ['locked']) fs.rmSync(path.join(dir, d), { recursive: true, force: true });
    cleanup?.();
  });

  test('a huge file, a 2 MiB map and an alias bomb are reported while /healthz keeps answering', async () => {
    const answers: { status: number; problemsSeen: number }[] = [];
    let seen = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const r = await convoy.get('/healthz');
        answers.push({ status: r.status, problemsSeen: seen });
      }
    })();
    write('10-huge.yaml', `# ${'x'.repeat(50 * 1024 * 1024)}\n`);
    write('11-many-labels.yaml', manyLabels(150_000));
    write('12-bomb.yaml', aliasBomb());
    const byFile = await waitFor(
      async () => {
        const list = await problems();
        seen = list.length;
        return list.length >= 3 ? new Map(list.map((p) => [p.file, p.message])) : undefined;
      },
      { what: 'the three files reported', timeoutMs: 180_000, context: () => convoy.logContext() },
    );
    polling = false;
    await poller;
    assert.match(byFile.get('10-huge.yaml') ?? '', /^Too long: may not be more than 4194304 bytes/);
    assert.match(byFile.get('11-many-labels.yaml') ?? '', /^Too long: may not be more than 1048576 bytes/);
    assert.match(byFile.get('12-bomb.yaml') ?? '', /Excessive alias count/);
    assert.ok(
      answers.every((a) => a.status === 200),
      `every /healthz answered 200: ${JSON.stringify(answers.filter((a) => a.status !== 200))}`,
    );
    const whileParsing = answers.filter((a) => a.problemsSeen < 3).length;
    assert.ok(whileParsing >= 2, `only ${whileParsing} /healthz answers before the files were reported`);
    assert.equal((await convoy.get('/readyz')).status, 200);
    for (const f of ['10-huge.yaml', '11-many-labels.yaml', '12-bomb.yaml']) fs.rmSync(path.join(dir, f));
    await waitFor(async () => (await problems()).length === 0, {
      what: 'problems cleared',
      timeoutMs: 30_000,
    });
  });

  test('a symlink to / is refused with one problem; nothing outside is read', async () => {
    fs.symlinkSync('/', path.join(dir, 'escape'));
    const list = await waitFor(
      async () => {
        const l = await problems();
        return l.some((p) => p.file === 'escape') ? l : undefined;
      },
      { what: 'the symlink reported', timeoutMs: 30_000, context: () => convoy.logContext() },
    );
    assert.deepEqual(list, [{ file: 'escape', message: `symlink to / leads outside ${dir}; not followed` }]);
    assert.ok(!convoy.log().includes('/proc/'), 'nothing under /proc was looked at');
    fs.rmSync(path.join(dir, 'escape'));
    await waitFor(async () => (await problems()).length === 0, {
      what: 'problem cleared',
      timeoutMs: 30_000,
    });
  });

  test('an unreadable sub-directory is one problem, logged once, and read once it is readable', async () => {
    const locked = path.join(dir, 'locked');
    fs.mkdirSync(locked);
    fs.writeFileSync(
      path.join(locked, 'ns.yaml'),
      stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'behind-the-lock' } }),
    );
    fs.chmodSync(locked, 0o000);
    await waitFor(
      async () => {
        const l = await problems();
        return l.length === 1 && l[0].file === 'locked' && l[0].message === 'cannot read directory: EACCES';
      },
      { what: 'the locked directory reported', timeoutMs: 30_000, context: () => convoy.logContext() },
    );
    const mentions = () =>
      convoy
        .log()
        .split('\n')
        .filter((l) => l.includes('locked') && l.includes('"level":40'));
    // The first warning travels through a pipe: wait for it, not for a fixed time.
    await waitFor(() => mentions().length > 0, {
      what: 'the locked directory logged',
      timeoutMs: 30_000,
      context: () => convoy.logContext(),
    });
    // Before: rescanned every 100 ms, with two warnings each time. A busy machine only makes
    // fewer rescans fit in this window; the first warning above proves the scanner got this far.
    await sleep(2000);
    assert.equal(mentions().length, 1, mentions().join('\n'));
    fs.chmodSync(locked, 0o755);
    await waitFor(async () => (await problems()).length === 0, {
      what: 'the directory read once readable',
      timeoutMs: 30_000,
      context: () => convoy.logContext(),
    });
  });
});

describe('file mode: a file written in two steps is never applied half-written', () => {
  let w: World;
  const route = {
    head: `apiVersion: ${API}\nkind: HTTPRoute\nmetadata:\n  name: split\n  namespace: default\nspec:\n  parentRefs:\n  - name: ${GATEWAY.name}\n  hostnames: [split.example.com]\n  rules:\n`,
    rule: (prefix: string, backend: string) =>
      `  - matches: [{path: {type: PathPrefix, value: ${prefix}}}]\n    backendRefs: [{name: ${backend}, port: 80}]\n`,
  };
  const get = (p: string) => request({ port: w.ports.http, host: 'split.example.com', path: p });

  before(async () => {
    w = await World.create('delta');
    for (const name of ['web', 'api']) await w.addBackend(name);
    w.writeRaw('00-gateway.yaml', gatewayYaml(w.ports.http));
    w.write(
      '01-services.yaml',
      ['web', 'api'].flatMap((n) => w.serviceDocs(n)),
    );
    w.writeRaw('02-route.yaml', route.head + route.rule('/a', 'web') + route.rule('/b', 'api'));
    // Generous, so a loaded machine cannot stretch the pause between the two writes past it.
    await w.startConvoy(['--from-dir-settle-ms', '3000']);
    await w.startEnvoy();
    await waitFor(async () => (await get('/b')).status === 200, {
      what: 'first request through Envoy',
      timeoutMs: 30_000,
      context: () => `${w.envoy.logContext(20)}\n${w.convoy.logContext(20)}`,
    });
  });

  after(async () => {
    await w?.dispose();
  });

  test('Envoy keeps serving the old routes until the whole file is there', async () => {
    const statuses: number[] = [];
    let running = true;
    const traffic = (async () => {
      while (running) {
        statuses.push(
          await get('/b').then(
            (r) => r.status,
            () => -1,
          ),
        );
        await sleep(20);
      }
    })();
    const file = path.join(w.objectsDir, '02-route.yaml');
    // First write: /a changes, /b is not written yet. Applied now, it would drop /b.
    fs.writeFileSync(file, route.head + route.rule('/a', 'api'));
    await sleep(300);
    fs.appendFileSync(file, route.rule('/b', 'api'));
    await waitFor(async () => (await get('/a')).json<EchoResponse>().backend === 'api', {
      what: 'the whole file applied',
      timeoutMs: 60_000,
      context: () => w.convoy.logContext(),
    });
    await sleep(500);
    running = false;
    await traffic;
    assert.ok(statuses.length > 20, `only ${statuses.length} requests`);
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
      `${statuses.length} requests to /b while the file was written`,
    );
  });
});
