import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { re2ProgramSize, type Re2Encoding } from '../../src/re2/program-size';
import { Re2SyntaxError } from '../../src/re2/syntax-error';
import { Re2Unsupported } from '../../src/re2/runes';
import { TooManyInstructions } from '../../src/re2/compile';

/**
 * RE2's ProgramSize() as computed by Convoy's port of RE2's compiler, against the values the real
 * Envoy 1.40 reported for the same patterns (`envoy --mode validate` with
 * `re2.max_program_size.error_level` 0, which makes Envoy print each regex's size): in Envoy's
 * default Latin-1 mode and in UTF-8 mode (`envoy.reloadable_features.re2_use_latin1_mode` off).
 * envoy-property.test.ts asks Envoy again for random patterns.
 */

/** [pattern, Latin-1 size, UTF-8 size]; 'error' where Envoy rejects the syntax, 'unsupported' where Convoy refuses. */
const ENVOY_SIZES: [string, number | 'error', number | 'unsupported'][] = [
  ['a', 5, 5],
  ['/v2/.*', 10, 16],
  ['^/foo/[0-9]+$', 6, 6],
  ['.*foo.*', 11, 23],
  ['^/api/v[0-9]+/users/[a-z0-9-]+$', 17, 17],
  ['/[^/]+/[^/]+', 12, 24],
  ['(?i)/API/v[0-9]+', 12, 12],
  ['(?i)[a-z]', 5, 10],
  ['(?i)k', 5, 8],
  ['(?i)s', 5, 7],
  ['(?P<id>[^/]+)', 9, 15],
  ['foo|foobar|fob', 12, 12],
  ['abc|abd|x', 8, 8],
  ['a|b|c|d', 5, 5],
  ['(a|b)*c', 8, 8],
  ['x*', 5, 5],
  ['x+?y*?z??', 10, 10],
  ['x{2,5}y{3,}z{0,2}', 20, 20],
  ['(?:a{2}){3}', 10, 10],
  ['a{96}', 100, 100],
  ['a{97}', 101, 101],
  ['/[a-z]{95}', 100, 100],
  ['/[a-z]{96}', 101, 101],
  ['\\d+\\s\\w*', 12, 12],
  ['[[:alpha:]][[:^digit:]]', 7, 13],
  ['\\W+', 10, 16],
  ['(?i)\\W', 9, 31],
  ['[^a]', 6, 12],
  ['(?i)[^a]', 7, 13],
  ['(?s).*', 6, 11],
  ['(?s:.){20}', 24, 144],
  ['.{12}', 28, 100],
  ['\\C*', 6, 6],
  ['a\\C*', 7, 7],
  ['\\bfoo\\B', 9, 9],
  ['(?m)^a$', 7, 7],
  ['^abc', 4, 4],
  ['\\Qa.b\\E', 7, 7],
  ['é', 6, 6],
  ['[é-ü]+', 6, 7],
  ['日本', 10, 10],
  ['(?i)é', 6, 'unsupported'], // Envoy: 7
  ['[^\\x00-\\x{10FFFF}]', 'error', 1],
  ['(a)(b)(c)', 13, 13],
  ['^(abc)$', 7, 7],
  ['(?U)a+b*', 8, 8],
  ['[a-f0-9]{8}-[a-f0-9]{4}', 29, 29],
  ['(?:|){1000}', 4, 4],
  ['/[a-z]{1000}', 1005, 1005],
];

function size(pattern: string, encoding: Re2Encoding): number | string {
  try {
    return re2ProgramSize(pattern, encoding, 10_000);
  } catch (e) {
    if (e instanceof Re2SyntaxError) return 'error';
    if (e instanceof Re2Unsupported) return 'unsupported';
    throw e;
  }
}

describe("RE2 program sizes equal Envoy 1.40's", () => {
  for (const [pattern, latin1, utf8] of ENVOY_SIZES) {
    test(JSON.stringify(pattern), () => {
      assert.equal(size(pattern, 'latin1'), latin1, 'Latin-1');
      assert.equal(size(pattern, 'utf8'), utf8, 'UTF-8');
    });
  }
});

describe('the computation is bounded', () => {
  const huge = [
    '[\\x{100}\\x{102}\\x{104}\\x{106}]{1000}',
    '(?:(?:a?){10}){100}',
    '(?:.?){1000}',
    '(?:[^\\x00-\\x{10FFFF}]|a?){1000}',
  ];
  for (const pattern of huge) {
    test(`${pattern} stops at the instruction cap (UTF-8)`, () => {
      assert.throws(() => re2ProgramSize(pattern, 'utf8', 2000), TooManyInstructions);
    });
  }

  test('nested counts beyond RE2 bound are a syntax error, never expanded', () => {
    assert.throws(() => re2ProgramSize('(?:(?:(?:a{1000}){1000}){1000})', 'latin1', 2000), Re2SyntaxError);
  });

  test('NoMatch pieces repeated many times are counted as visits', () => {
    assert.throws(
      () => re2ProgramSize('(?:[^\\x00-\\x{10FFFF}]{10}){100}', 'utf8', 200),
      TooManyInstructions,
    );
  });

  test('deep nesting does not overflow the stack', () => {
    const nested = '('.repeat(300) + 'a' + ')'.repeat(300);
    assert.equal(re2ProgramSize(nested, 'latin1', 10_000), 605);
  });
});

test('Latin-1 reads the UTF-8 bytes of the pattern: a repetition after é repeats its last byte', () => {
  // "é{2}" is C3 A9 A9 in Latin-1: one Literal plus two; in UTF-8 é é: four byte instructions.
  assert.equal(re2ProgramSize('é{2}', 'latin1', 1000), 7);
  assert.equal(re2ProgramSize('é{2}', 'utf8', 1000), 8);
});
