/**
 * The ListenerSet CRD's `spec` (v1.6.1 standard channel).
 */
import type { ObjectNode } from '../schema';
import { obj } from '../schema';
import { group, kind, namespace, objectName } from './common';
import { listeners } from './listeners';

export const listenerSetSpec: ObjectNode = obj(
  {
    listeners: listeners(true),
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
