import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parsePlainYaml } from '../../../src/providers/files/fast-yaml';
import { parseFile } from '../../../src/providers/files/parse';
import { SIZES, World } from '../../../bench/world';
import { objectFileText } from '../../../bench/world-files';

/** Both parsers on one text: the fast path, when it reads the text, must agree with the full parser. */
function assertSameAsFullParser(text: string): boolean {
  const full = parseFile('x.yaml', text, undefined, { fastPath: false });
  const fast = parsePlainYaml(text);
  if (fast === undefined) return false;
  assert.deepEqual(full.errors, [], `the fast path read a text the full parser refuses:\n${text}`);
  const viaFast = parseFile('x.yaml', text);
  assert.ok(viaFast.entries.every((e) => e.unsharedTextLength === text.length));
  const withoutLength = viaFast.entries.map(({ unsharedTextLength: _, ...rest }) => rest);
  assert.deepEqual({ ...viaFast, entries: withoutLength }, full, text);
  return true;
}

/** Scalars that look like what manifests hold, plus the awkward ones YAML 1.1 reads specially. */
const scalar = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z/][a-z0-9./-]{0,20}$/), weight: 12 },
  { arbitrary: fc.nat(), weight: 3 },
  fc.constantFrom(
    'yes',
    'No',
    'on',
    'OFF',
    'y',
    'N',
    'true',
    'False',
    'null',
    '~',
    '',
    '0',
    '-0',
    '0755',
    '0x1F',
    '1_000',
    '1.5',
    '.inf',
    '1:20',
    '2021-05-06',
    '2021-05-06T07:08:09Z',
    '2021-13-06T07:08:09Z',
    '192.0.2.1',
    '1.2.3',
    'a: b',
    'a #b',
    'a#b',
    '*.example.com',
    '&x',
    '!tag',
    '- x',
    '{a: 1}',
    '[a]',
    "it's",
    'say "hi"',
    'back\\slash',
    ' lead',
    'trail ',
    'http://x:80/y',
    '<<',
    '@x',
    '`x`',
    '%x',
    'ünïcode',
    'multi\nline',
  ),
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

const key = fc.oneof(
  fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_./-]{0,12}$/),
  fc.constantFrom('on', 'y', '1', 'a b', '"q"'),
);

const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), tie('list')),
  root: fc.dictionary(key, tie('node'), { minKeys: 1, maxKeys: 6 }),
  map: fc.dictionary(key, tie('node'), { maxKeys: 5 }),
  list: fc.array(tie('node'), { maxLength: 4 }),
})).root;

describe('plain YAML fast path', () => {
  test('agrees with the full parser wherever it reads a generated document', () => {
    let read = 0;
    fc.assert(
      fc.property(
        value,
        fc.boolean(),
        fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE'),
        (v, indentSeq, q) => {
          const text = stringify(v, { indentSeq, defaultStringType: q as 'PLAIN', lineWidth: 0 });
          if (assertSameAsFullParser(text)) read++;
          if (assertSameAsFullParser(`# c\n---\n${text}---\n${text}`)) read++;
        },
      ),
      // Seeded: how many generated texts the fast path reads varies by seed (98–170 of 800 seen),
      // and the check below must not fail by chance.
      { numRuns: 400, seed: 15 },
    );
    assert.ok(read > 100, `the fast path read only ${read} texts`);
  });

  test('agrees with the full parser on mutated manifests (any line edit, any character)', () => {
    const base = objectFileText(new World({ size: SIZES.tiny }).route(1));
    fc.assert(
      fc.property(fc.nat(), fc.string({ maxLength: 4 }), fc.nat(), (at, insert, cut) => {
        const i = at % base.length;
        assertSameAsFullParser(base.slice(0, i) + insert + base.slice(i + (cut % 3)));
      }),
      { numRuns: 600 },
    );
  });

  test('reads every object of a bench world as the full parser does', () => {
    const world = new World({ size: SIZES.tiny });
    for (const obj of world.objects()) {
      assert.ok(assertSameAsFullParser(objectFileText(obj)), `fast path gave up on ${obj.kind}`);
    }
  });

  test('leaves what it does not read to the full parser', () => {
    for (const text of [
      'a: yes\n',
      'a: &x 1\nb: *x\n',
      'a: |\n  text\n',
      'a: 1\na: 2\n',
      'a: "esc\\n"\n',
      'a: [1, 2]\n',
      'a: 1\n---\n---\nb: 2\n',
      'a: b\n  c\n',
      'a:\tb\n',
      '%YAML 1.1\n---\na: 1\n',
      'a: 1.5\n',
      'a: 2021-05-06\n',
    ]) {
      assert.equal(parsePlainYaml(text), undefined, text);
    }
  });

  test('numbers documents as the full parser does', () => {
    const text = '# head\n---\na: 1\n---\nb: x\n';
    assert.deepEqual(parsePlainYaml(text), [{ a: 1 }, { b: 'x' }]);
    assertSameAsFullParser(text);
    assert.deepEqual(parsePlainYaml('# only a comment\n'), []);
  });
});
