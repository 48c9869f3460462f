import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { envoyRegexProblem, MAX_REGEX_BYTES, re2Error } from '../../src/re2/envoy-regex';
import { re2ProgramSize } from '../../src/re2/program-size';
import { translatePathModifier } from '../../src/envoy/translate/routes';

/**
 * Convoy's decision on whether Envoy 1.40 accepts a regex. The program sizes behind these verdicts
 * come from program-size.test.ts (checked against Envoy); envoy-property.test.ts compares the
 * verdicts with the real Envoy on random regexes.
 */

describe('regexes Envoy rejects are refused, with RE2 error or the program size', () => {
  const cases: [string, string][] = [
    ['/[a-z]{1000}', "RE2 program size 1005 exceeds Envoy's limit of 100"],
    ['a{1001}', 'invalid repetition size: {1001}'],
    ['/foo\\Z', 'invalid escape sequence: \\Z'],
    ['(?=x)', 'invalid perl operator: (?='],
    ['(a', 'missing ): (a'],
    ['a**', 'bad repetition operator: **'],
    ['(?:(?:a{1000}){1000})', 'invalid repetition size: {1000}'],
    // Latin-1 (Envoy's default since 1.40) has no runes above U+00FF: Envoy's own message.
    ['/\\x{100}', 'invalid escape sequence: \\x{100'],
    ['\\400', 'invalid escape sequence: \\400'],
    ['a{97}', "RE2 program size 101 exceeds Envoy's limit of 100"],
    ['/[a-z]{96}', "RE2 program size 101 exceeds Envoy's limit of 100"],
  ];
  for (const [pattern, problem] of cases) {
    test(JSON.stringify(pattern), () => assert.equal(envoyRegexProblem(pattern), problem));
  }

  test('a program over the limit in UTF-8 mode (Envoy with re2_use_latin1_mode off) is refused too', () => {
    assert.equal(
      envoyRegexProblem('.{13}'),
      "RE2 program size in UTF-8 mode 108 exceeds Envoy's limit of 100",
    );
    assert.equal(envoyRegexProblem('.{12}'), undefined);
  });

  test('too large to compile within the cap (Envoy: 13004)', () => {
    assert.match(
      envoyRegexProblem('[acegikmoqsuwy]{1000}')!,
      /^RE2 program size is over Envoy's limit of 100 \(compilation stopped at \d+ instructions\)$/,
    );
  });
});

describe('regexes Envoy accepts pass', () => {
  const ok = [
    '/v2/.*',
    '^/foo/[0-9]+$',
    '.*foo.*',
    '/[^/]+/[^/]+',
    '^/api/v[0-9]+/users/[a-z0-9-]+$',
    '(?i)/API/v[0-9]+',
    '(?P<id>[^/]+)',
    '[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}',
    'a{96}',
    '/[a-z]{95}',
    '(?s).*',
    '\\d+\\s\\w*',
    '/caf[eé]',
  ];
  for (const pattern of ok)
    test(JSON.stringify(pattern), () => assert.equal(envoyRegexProblem(pattern), undefined));
});

describe('what Convoy refuses without asking RE2', () => {
  test('empty, too long, or not Unicode', () => {
    assert.equal(envoyRegexProblem(''), 'must not be empty');
    assert.equal(
      envoyRegexProblem('a'.repeat(MAX_REGEX_BYTES)),
      "RE2 program size 1028 exceeds Envoy's limit of 100",
    );
    assert.equal(
      envoyRegexProblem('a'.repeat(MAX_REGEX_BYTES + 1)),
      `is longer than ${MAX_REGEX_BYTES} bytes`,
    );
    assert.equal(envoyRegexProblem('/\ud800'), 'is not valid Unicode');
  });

  test('what the port cannot size exactly is refused, naming why (stricter than Envoy)', () => {
    assert.match(envoyRegexProblem('\\pL+')!, /^uses Unicode classes .*cannot compute$/);
    assert.match(envoyRegexProblem('(?i)/café')!, /^uses case-insensitive matching of non-ASCII characters/);
  });

  test("RE2 from npm is older than Envoy's: (?<name>…) is refused although Envoy accepts it", () => {
    assert.equal(envoyRegexProblem('(?<id>[0-9]+)'), 'invalid perl operator: (?<');
  });
});

test('RE2 running out of memory does not break later checks', () => {
  // RE2 in WASM (16 MiB) aborts on this; the check never hands it such a pattern (it is refused as
  // a Unicode class first), but if it did, the aborted instance is replaced.
  assert.equal(re2Error('\\pL{1000}'), 'RE2 could not compile it');
  assert.equal(re2Error('(a'), 'missing ): (a');
  assert.equal(re2Error('/v2/.*'), undefined);
});

test("regexes Convoy writes itself stay within Envoy's limits: a prefix rewrite of a 1023-byte prefix", () => {
  const prefix = '/' + 'a.b(c)'.repeat(170) + 'xy';
  assert.equal(prefix.length, 1023);
  const rewrite = translatePathModifier(
    { type: 'ReplacePrefixMatch', value: '/' },
    { type: 'PathPrefix', value: prefix },
    false,
  );
  assert.ok(rewrite && 'regex_rewrite' in rewrite);
  const regex = rewrite.regex_rewrite.pattern!.regex!;
  // RE2 matches the literal prefix after ^ separately: the program stays small however long it is.
  assert.equal(re2Error(regex), undefined);
  for (const encoding of ['latin1', 'utf8'] as const)
    assert.equal(re2ProgramSize(regex, encoding, 10_000), 5); // Envoy: 5
});
