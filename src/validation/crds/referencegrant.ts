/**
 * The ReferenceGrant CRD's `spec` (v1.6.1 standard channel).
 */
import type { ObjectNode } from '../schema';
import { arr, obj } from '../schema';
import { group, kind, namespace, objectName } from './common';

export const referenceGrantSpec: ObjectNode = obj(
  {
    from: arr(
      obj(
        { group: group(), kind: kind(), namespace: namespace() },
        { required: ['group', 'kind', 'namespace'] },
      ),
      { minItems: 1, maxItems: 16 },
    ),
    to: arr(obj({ group: group(), kind: kind(), name: objectName() }, { required: ['group', 'kind'] }), {
      minItems: 1,
      maxItems: 16,
    }),
  },
  { required: ['from', 'to'] },
);
