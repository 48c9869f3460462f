/**
 * The TLSRoute CRD's `spec` (v1.6.1 standard channel).
 */
import { isIP } from 'node:net';
import type { ObjectNode } from '../schema';
import { arr, obj, rule } from '../schema';
import { RFC1123_RE, failing, hostname, sectionName } from './common';
import { backendRef, weight } from './backend-refs';
import { parentRefs } from './route-common';

export const tlsRouteSpec: ObjectNode = obj(
  {
    hostnames: arr(hostname(), {
      minItems: 1,
      maxItems: 1024,
      rules: [
        // self.all(h, !isIP(h))
        rule<string[]>('Hostnames cannot contain an IP', (hs) => failing(hs, (h) => isIP(h) === 0)),
        // self.all(h, !h.contains('*') ? h.matches('^([a-z0-9]…)$') : true)
        rule<string[]>('Hostnames must be valid based on RFC-1123', (hs) =>
          failing(hs, (h) => h.includes('*') || RFC1123_RE.test(h)),
        ),
        // self.all(h, h.contains('*') ? (h.startsWith('*.') && h.substring(2).matches('^([a-z0-9]…)$')) : true)
        rule<string[]>(
          'Wildcards on hostnames must be the first label, and the rest of hostname must be valid based on RFC-1123',
          (hs) =>
            failing(hs, (h) => !h.includes('*') || (h.startsWith('*.') && RFC1123_RE.test(h.substring(2)))),
        ),
      ],
    }),
    parentRefs: parentRefs(),
    rules: arr(
      obj(
        {
          backendRefs: arr(backendRef({ weight: weight() }), { minItems: 1, maxItems: 16 }),
          name: sectionName(),
        },
        { required: ['backendRefs'] },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { required: ['hostnames', 'rules'] },
);
