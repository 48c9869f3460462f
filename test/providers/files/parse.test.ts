import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { MAX_DOCUMENT_BYTES, parseFile } from '../../../src/providers/files/parse';

/** A Service whose labels map has `n` keys (about 14 bytes of YAML each). */
function manyLabels(n: number, extra = ''): string {
  const lines = ['apiVersion: v1', 'kind: Service', 'metadata:', '  name: many', '  labels:'];
  for (let i = 0; i < n; i++) lines.push(`    k${i}: v`);
  return `${lines.join('\n')}\n${extra}spec:\n  ports:\n  - port: 80\n`;
}

describe('parseFile', () => {
  test('YAML 1.1 like Kubernetes: timestamps stay strings, yes/on are booleans', () => {
    const r = parseFile(
      'x.yaml',
      'kind: Service\nmetadata:\n  name: a\n  creationTimestamp: 2021-05-06T07:08:09Z\nx: yes\n',
    );
    assert.deepEqual(r.errors, []);
    const v = r.entries[0].value as Record<string, Record<string, unknown>>;
    assert.equal(v.metadata.creationTimestamp, '2021-05-06T07:08:09Z');
    assert.equal(v.x, true);
  });

  test('plain scalars read as Kubernetes reads them: no NaN from digitless numbers, no base 60', () => {
    const read = (scalar: string) => {
      const r = parseFile('x.yaml', `a: ${scalar}\n`, undefined, { fastPath: false });
      assert.deepEqual(r.errors, [], scalar);
      return (r.entries[0].value as { a: unknown }).a;
    };
    // The yaml package alone reads each of these as a number (NaN, or 80 for 1:20).
    for (const s of [
      'e80',
      'E5',
      '.e1',
      'e-1',
      '+e1',
      '.',
      '+.',
      '-.',
      '._',
      '0x_',
      '0b_',
      '1:20',
      '1:20.5',
    ]) {
      assert.equal(read(s), s);
    }
    const numbers: [string, number][] = [
      ['1e5', 100000],
      ['.5e1', 5],
      ['.5', 0.5],
      ['1.', 1],
      ['0x1F', 31],
      ['0b101', 5],
      ['017', 15],
      ['1_000', 1000],
      ['.inf', Infinity],
      ['-.inf', -Infinity],
    ];
    for (const [s, n] of numbers) assert.equal(read(s), n, s);
    assert.ok(Number.isNaN(read('.nan')));
  });

  test('empty files and empty documents yield nothing; duplicate keys are errors', () => {
    assert.deepEqual(parseFile('x.yaml', ''), { entries: [], errors: [] });
    assert.deepEqual(parseFile('x.yaml', '# only a comment\n---\n'), { entries: [], errors: [] });
    assert.deepEqual(parseFile('x.json', '  \n'), { entries: [], errors: [] });
    const text = manyLabels(16_384).replace('  labels:\n', '  labels:\n    k16383: first\n');
    const r = parseFile('x.yaml', text);
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0].document, 0);
    assert.match(
      r.errors[0].message,
      /^invalid YAML: Map keys must be unique: "k16383" at line \d+, column 5$/,
    );
    assert.deepEqual(r.entries, []);
  });

  test('the same keys collide as under the yaml package’s own (quadratic) check', () => {
    // Pairs of keys written differently; the package decides whether they are the same key.
    const keys = [
      'a',
      '"a"',
      "'a'",
      '1',
      '"1"',
      '1.0',
      '0x1',
      'true',
      'yes',
      'on',
      'y',
      '~',
      'null',
      '""',
      '.nan',
      '.inf',
      '-0',
      '0',
      '0o7',
      '7',
      '? [a]',
      '*anchor',
      '<<',
      '2001-01-01',
    ];
    let checked = 0;
    for (const k1 of keys) {
      for (const k2 of keys) {
        const line = (k: string, v: number) => (k.startsWith('?') ? `${k}\n: ${v}` : `${k} : ${v}`);
        const text = `base: &anchor {x: 1}\nm:\n  ${line(k1, 1).replace('\n', '\n  ')}\n  ${line(k2, 2).replace('\n', '\n  ')}\n`;
        const reference = parseAllDocuments(text, { version: '1.1', uniqueKeys: true, logLevel: 'error' });
        if (!Array.isArray(reference) || reference.length !== 1) continue;
        const otherErrors = reference[0].errors.filter((e) => e.code !== 'DUPLICATE_KEY');
        if (otherErrors.length > 0) continue;
        const expected = reference[0].errors.some((e) => e.code === 'DUPLICATE_KEY');
        const got = parseFile('x.yaml', text).errors.some((e) =>
          e.message.includes('Map keys must be unique'),
        );
        assert.equal(got, expected, `${k1} vs ${k2}`);
        checked++;
      }
    }
    assert.ok(checked > 400, `only ${checked} pairs compared`);
  });

  test('duplicates are found at any depth, in flow maps and in sequences of maps; repeats are counted', () => {
    const r = parseFile('x.yaml', 'a:\n  - b: {c: 1, c: 2}\n  - d: 1\n    d: 2\n    d: 3\n');
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0].message, /Map keys must be unique: "d" at line 4, column 5 \(and 2 more\)$/);
  });
});

describe('parseFile: bounded', () => {
  test('a YAML document over the request limit is reported, not parsed; the others are', () => {
    const big = `kind: Service\nmetadata:\n  name: big\n  annotations:\n    a: "${'x'.repeat(200)}"\n`;
    const r = parseFile('x.yaml', `kind: A\n---\n${big}---\nkind: B\n`, 100);
    assert.deepEqual(
      r.entries.map((e) => [e.document, (e.value as { kind: string }).kind]),
      [
        [0, 'A'],
        [2, 'B'],
      ],
    );
    assert.equal(r.errors.length, 1);
    assert.equal(r.errors[0].document, 1);
    assert.match(
      r.errors[0].message,
      /^Request entity too large: limit is 100 \(the document is \d+ bytes; not parsed\)$/,
    );
    assert.equal(MAX_DOCUMENT_BYTES, 3 * 1024 * 1024, "kube-apiserver's request-body limit");
  });

  test('an alias bomb is refused by the alias-count guard', () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      lines.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const r = parseFile('bomb.yaml', `${lines.join('\n')}\n`);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0].message, /Excessive alias count/);
    assert.deepEqual(r.entries, []);
  });

  test('messages name line and column but never quote the file, which may hold keys', () => {
    const secret = 'c3VwZXItc2VjcmV0LWtleS1tYXRlcmlhbA==';
    const r = parseFile(
      's.yaml',
      `kind: Secret\ndata:\n  tls.key: ${secret}\n  tls.key: ${secret}\n bad: [\n`,
    );
    assert.ok(r.errors.length > 0);
    for (const e of r.errors) {
      assert.ok(!e.message.includes(secret), e.message);
      assert.match(e.message, /at line \d+, column \d+/);
    }
    const j = parseFile('s.json', `{"kind": "Secret", "data": {"tls.key": ${secret}}}`);
    assert.deepEqual(j.errors, [{ message: "invalid JSON: Unexpected token 'c' (not valid JSON)" }]);
  });

  test('deep nesting is an error, not a crash', () => {
    const r = parseFile('deep.yaml', `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
    assert.deepEqual(r.entries, []);
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0].message, /^invalid YAML: /);
  });
});
