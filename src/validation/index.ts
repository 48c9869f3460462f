/**
 * Object validation for file mode, equal to what a Gateway API v1.6.1 cluster would refuse.
 * (Initial version: object shape only; the CRD schema and CEL rules follow.)
 */
import type { KubeObject } from '../store/objects';

export function validateObject(obj: KubeObject): string[] {
  const errors: string[] = [];
  if (typeof obj.apiVersion !== 'string' || obj.apiVersion === '') errors.push('apiVersion: Required value');
  if (typeof obj.kind !== 'string' || obj.kind === '') errors.push('kind: Required value');
  const meta = obj.metadata as unknown;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) {
    errors.push('metadata: Required value');
    return errors;
  }
  if (typeof obj.metadata.name !== 'string' || obj.metadata.name === '') {
    errors.push('metadata.name: Required value');
  }
  if (obj.kind === 'Gateway' || obj.kind === 'ListenerSet') {
    const listeners = (obj.spec as { listeners?: { port?: unknown }[] } | undefined)?.listeners ?? [];
    listeners.forEach((l, i) => {
      if (typeof l?.port !== 'number' || !Number.isInteger(l.port) || l.port < 1 || l.port > 65535) {
        errors.push(`spec.listeners[${i}].port: Invalid value: ${JSON.stringify(l?.port)}: must be 1-65535`);
      }
    });
  }
  return errors;
}
