/**
 * The EnvoyFleet CRD's `spec` (gateway.convoy.dev/v1alpha1, docs/architecture.md §13): Convoy's own
 * parameters for managed fleets. Unlike the Gateway API schemas in this folder it is the source:
 * deploy/crds/envoyfleet.yaml is rendered from it (src/validation/openapi.ts), and a test keeps
 * the two equal, so the API server and file mode enforce the same schema.
 */
import type { ObjectNode } from '../schema';
import { arr, bool, int, map, obj, str } from '../schema';

const QUANTITY =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const DURATION = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
const ABSOLUTE_PATH = '^/[^\\x00-\\x1f\\x7f]*$';
const HOST_PORT = '^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?:[0-9]{1,5}$';
const ROUTABILITY = '^(Public|Private|Cluster|[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9][-A-Za-z0-9_.]*)$';
const SERVICE_TYPES = ['LoadBalancer', 'NodePort', 'ClusterIP'];
/** An IPv4 or IPv6 address (the parameters' reader checks it with node:net as well). */
const IP_ADDRESS = '^(([0-9]{1,3}\\.){3}[0-9]{1,3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$';
const labelMap = () => map(str({ maxLength: 4096 }), { maxProperties: 64 });
const quantities = () => map(str({ pattern: QUANTITY, maxLength: 64 }), { maxProperties: 16 });

export const envoyFleetSpec: ObjectNode = obj({
  managed: bool(),
  workload: obj({
    kind: str({ enum: ['Deployment', 'DaemonSet'] }),
    replicas: int({ format: 'int32', minimum: 0, maximum: 1000 }),
    image: str({ minLength: 1, maxLength: 512 }),
    resources: obj({ requests: quantities(), limits: quantities() }),
    nodeSelector: labelMap(),
    tolerations: arr(
      obj({
        key: str({ maxLength: 316 }),
        operator: str({ enum: ['Exists', 'Equal'] }),
        value: str({ maxLength: 63 }),
        effect: str({ enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] }),
        tolerationSeconds: int({ format: 'int64' }),
      }),
      { maxItems: 32 },
    ),
    logLevel: str({ enum: ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] }),
    drainTimeout: str({ pattern: DURATION }),
  }),
  service: obj({
    type: str({ enum: SERVICE_TYPES }),
    annotations: labelMap(),
    externalTrafficPolicy: str({ enum: ['Cluster', 'Local'] }),
  }),
  accessLog: obj({
    format: str({ enum: ['JSON', 'Text', 'None'] }),
    path: str({ pattern: ABSOLUTE_PATH, maxLength: 4096 }),
  }),
  tracing: obj({
    collector: str({ pattern: HOST_PORT, maxLength: 260 }),
    samplingPercent: int({ format: 'int32', minimum: 0, maximum: 100 }),
  }),
  routability: str({ pattern: ROUTABILITY, maxLength: 253 }),
  // Read only by convoy serve --from-dir's local Envoy processes (docs/operations.md §14).
  local: obj({ bindAddress: str({ pattern: IP_ADDRESS, maxLength: 45 }) }),
  routabilities: arr(str({ pattern: ROUTABILITY, maxLength: 253 }), { minItems: 1, maxItems: 16 }),
  privateLoadBalancer: obj({
    provider: str({ enum: ['AWS', 'GCP', 'Azure'] }),
    annotations: labelMap(),
  }),
  customRoutabilities: arr(
    obj(
      {
        name: str({ pattern: ROUTABILITY, maxLength: 253 }),
        serviceType: str({ enum: SERVICE_TYPES }),
        annotations: labelMap(),
      },
      { required: ['name'] },
    ),
    { maxItems: 16 },
  ),
});
