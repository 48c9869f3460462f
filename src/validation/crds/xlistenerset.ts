/**
 * The legacy XListenerSet CRD's `spec` (gateway.networking.x-k8s.io/v1alpha1, experimental
 * channel of Gateway API v1.4.1, the last release that shipped it; docs/gateway-api.md §29). It is
 * the ListenerSet schema except that a listener's port may be left out or 0 (default 0, for the
 * implementation to assign) and the "tls mode must be set for protocol TLS" rule does not exist.
 */
import type { ObjectNode } from '../schema';
import { arr, int, obj } from '../schema';
import { group, kind, namespace, objectName } from './common';
import { listenerRules, listenerSchema } from './listeners';

/** The Gateway API release whose experimental channel is the reference for this schema. */
export const XLISTENERSET_CRD_RELEASE = 'v1.4.1';

export const xListenerSetSpec: ObjectNode = obj(
  {
    listeners: arr(listenerSchema(int({ format: 'int32', minimum: 0, maximum: 65535, default: 0 }), true), {
      minItems: 1,
      maxItems: 64,
      listType: 'map',
      listMapKeys: ['name'],
      rules: listenerRules(true, false),
    }),
    parentRef: obj(
      {
        group: group('gateway.networking.k8s.io'),
        kind: kind('Gateway'),
        name: objectName(),
        namespace: namespace(),
      },
      { required: ['name'] },
    ),
  },
  { required: ['listeners', 'parentRef'] },
);
