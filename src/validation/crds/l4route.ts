/**
 * The TCPRoute and UDPRoute CRDs' `spec` (v1.6.1 standard channel): the two are the same schema, parent
 * references and exactly one rule of one to sixteen weighted backendRefs, without hostnames.
 */
import type { ObjectNode } from '../schema';
import { arr, obj } from '../schema';
import { sectionName } from './common';
import { backendRef, weight } from './backend-refs';
import { parentRefs } from './route-common';

export const l4RouteSpec: ObjectNode = obj(
  {
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
  { required: ['rules'] },
);
