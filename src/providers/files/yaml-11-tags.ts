/**
 * The YAML 1.1 tags the file provider parses with, corrected to read plain scalars as Kubernetes'
 * own YAML decoder does (docs/architecture.md §10.3).
 */
import type { CollectionTag, ScalarTag, Tags } from 'yaml';

const INT = 'tag:yaml.org,2002:int';
const FLOAT = 'tag:yaml.org,2002:float';

/**
 * Tests that need a digit where the yaml package's own accept none: it reads `e80`, `.`, `+.`,
 * `0x_` or `0b_` as a number that is NaN, where Kubernetes keeps the string.
 */
const DIGIT_REQUIRED: Record<string, RegExp> = {
  'int/BIN': /^[-+]?0b[0-1_]*[0-1][0-1_]*$/,
  'int/OCT': /^[-+]?0[0-7_]*[0-7][0-7_]*$/,
  'int/HEX': /^[-+]?0x[0-9a-fA-F_]*[0-9a-fA-F][0-9a-fA-F_]*$/,
  'float/EXP': /^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]*[0-9][0-9_]*)[eE][-+]?[0-9]+$/,
};
const PLAIN_FLOAT_SOURCE = String(/^[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*$/);
const PLAIN_FLOAT = /^[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9_]*[0-9][0-9_]*)$/;

/**
 * Returns the yaml package's YAML 1.1 tags with base-60 numbers dropped (Kubernetes reads `1:20`
 * as a string) and every number requiring a digit, so no plain scalar becomes NaN unless it is
 * `.nan`. Why: a value such as a header `e5` or a port `e80` must reach validation as the string
 * it is in the API server, not as NaN (which JSON turns into null).
 */
export function kubernetesYaml11Tags(tags: Tags): Tags {
  const out: Tags = [];
  for (const t of tags) {
    if (typeof t === 'string' || !('test' in t) || !t.test) {
      out.push(t);
      continue;
    }
    const tag = t as ScalarTag | CollectionTag;
    if ((tag.tag === INT || tag.tag === FLOAT) && tag.format === 'TIME') continue;
    const kind = `${tag.tag === INT ? 'int' : tag.tag === FLOAT ? 'float' : 'other'}/${tag.format ?? ''}`;
    const stricter =
      DIGIT_REQUIRED[kind] ??
      (kind === 'float/' && String(tag.test) === PLAIN_FLOAT_SOURCE ? PLAIN_FLOAT : undefined);
    out.push(stricter ? ({ ...tag, test: stricter } as typeof tag) : tag);
  }
  return out;
}
