/**
 * The GatewayClass CRD's `spec` (v1.6.1 standard channel).
 */
import type { ObjectNode } from '../schema';
import { obj, str, withRules } from '../schema';
import { CONTROLLER_NAME, group, kind, namespace, objectName } from './common';

export const gatewayClassSpec: ObjectNode = obj(
  {
    controllerName: withRules(str({ minLength: 1, maxLength: 253, pattern: CONTROLLER_NAME }), {
      // self == oldSelf
      message: 'Value is immutable',
      check: () => true,
      transition: true,
    }),
    description: str({ maxLength: 64 }),
    parametersRef: obj(
      { group: group(), kind: kind(), name: objectName(), namespace: namespace() },
      { required: ['group', 'kind', 'name'] },
    ),
  },
  { required: ['controllerName'] },
);
