/**
 * Route filters HTTPRoute and GRPCRoute share (header modifiers, RequestMirror, ExtensionRef) and
 * the CEL rules tying a filter's `type` to the field it sets.
 */
import type { Rule } from '../schema';
import { arr, int, obj, rule, str, withRules } from '../schema';
import type { Obj } from './common';
import { HEADER_NAME, has, localRef } from './common';
import { backendRef } from './backend-refs';

export const headerModifier = () =>
  obj({
    add: arr(
      obj(
        {
          name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
          value: str({ minLength: 1, maxLength: 4096 }),
        },
        {
          required: ['name', 'value'],
        },
      ),
      { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
    ),
    remove: arr(str(), { maxItems: 16, listType: 'set' }),
    set: arr(
      obj(
        {
          name: str({ minLength: 1, maxLength: 256, pattern: HEADER_NAME }),
          value: str({ minLength: 1, maxLength: 4096 }),
        },
        {
          required: ['name', 'value'],
        },
      ),
      { maxItems: 16, listType: 'map', listMapKeys: ['name'] },
    ),
  });

export const requestMirror = () =>
  withRules(
    obj(
      {
        backendRef: backendRef(),
        fraction: withRules(
          obj(
            {
              denominator: int({ format: 'int32', minimum: 1, default: 100 }),
              numerator: int({ format: 'int32', minimum: 0 }),
            },
            { required: ['numerator'] },
          ),
          // self.numerator <= self.denominator
          rule<{ numerator: number; denominator: number }>(
            'numerator must be less than or equal to denominator',
            (f) => f.numerator <= f.denominator,
          ),
        ),
        percent: int({ format: 'int32', minimum: 0, maximum: 100 }),
      },
      { required: ['backendRef'] },
    ),
    // !(has(self.percent) && has(self.fraction))
    rule<Obj>(
      'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter',
      (m) => !(has(m, 'percent') && has(m, 'fraction')),
    ),
  );

export const extensionRef = () => localRef();

/** Rules tying filter.type to the field it sets, for the given (type, field) pairs. */
export function filterTypeRules(pairs: [string, string][]): Rule[] {
  const out: Rule[] = [];
  for (const [type, field] of pairs) {
    // !(has(self.<field>) && self.type != '<type>')
    out.push(
      rule<Obj>(
        `filter.${field} must be nil if the filter.type is not ${type}`,
        (f) => !(has(f, field) && f.type !== type),
      ),
    );
    // !(!has(self.<field>) && self.type == '<type>')
    out.push(
      rule<Obj>(
        `filter.${field} must be specified for ${type} filter.type`,
        (f) => !(!has(f, field) && f.type === type),
      ),
    );
  }
  return out;
}

/** self.filter(f, f.type == '<type>').size() <= 1 */
export const notRepeated = (type: string) =>
  rule<{ type: string }[]>(
    `${type} filter cannot be repeated`,
    (fs) => fs.filter((f) => f.type === type).length <= 1,
  );
