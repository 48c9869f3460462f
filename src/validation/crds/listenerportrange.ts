/**
 * The ListenerPortRange CRD's `spec` (gateway.convoy.dev/v1alpha1, docs/gateway-api.md §30): a
 * policy that extends one Gateway or ListenerSet listener from its port to `endPort`. Like the
 * EnvoyFleet schema it is the source: deploy/03-crd-listenerportrange.yaml is rendered from it
 * (src/validation/openapi.ts), and a test keeps the two equal.
 *
 * What a CRD can check is here (the target's shape, endPort's bounds). endPort greater than the
 * listener's port and the range's size bound need the listener, another object: Convoy checks
 * those and reports them in the policy's status.
 */
import type { ObjectNode } from '../schema';
import { int, obj, str } from '../schema';
import { objectName, sectionName } from './common';

export const listenerPortRangeSpec: ObjectNode = obj(
  {
    targetRef: obj(
      {
        group: str({ enum: ['gateway.networking.k8s.io'] }),
        kind: str({ enum: ['Gateway', 'ListenerSet'] }),
        name: objectName(),
        sectionName: sectionName(),
      },
      { required: ['group', 'kind', 'name', 'sectionName'] },
    ),
    endPort: int({ format: 'int32', minimum: 2, maximum: 65535 }),
  },
  { required: ['targetRef', 'endPort'] },
);
