import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeMessage, encodeMessage } from '../../src/envoy/protos';
import { TypeUrl, messageNameOf, type EnvoyResources } from '../../src/envoy/resources';
import { envoyValidate as runEnvoyValidate, type EnvoyRun } from '../../src/envoy/validate';
import { repoRoot } from '../support/repo';

export const KIND_TYPE: Record<keyof EnvoyResources, string> = {
  listeners: messageNameOf(TypeUrl.Listener),
  routes: messageNameOf(TypeUrl.Route),
  clusters: messageNameOf(TypeUrl.Cluster),
  endpoints: messageNameOf(TypeUrl.Endpoint),
  secrets: messageNameOf(TypeUrl.Secret),
};

export const KINDS = Object.keys(KIND_TYPE) as (keyof EnvoyResources)[];

/** Every resource encoded, per kind, in output order. */
export function encodeAll(res: EnvoyResources): Record<keyof EnvoyResources, Buffer[]> {
  const out = {} as Record<keyof EnvoyResources, Buffer[]>;
  for (const kind of KINDS) out[kind] = (res[kind] as object[]).map((r) => encodeMessage(KIND_TYPE[kind], r));
  return out;
}

/** What the golden files hold: each resource encoded, then decoded back to proto3-JSON-like objects. */
export function decodeAll(res: EnvoyResources): Record<keyof EnvoyResources, unknown[]> {
  const encoded = encodeAll(res);
  const out = {} as Record<keyof EnvoyResources, unknown[]>;
  for (const kind of KINDS) out[kind] = encoded[kind].map((b) => decodeMessage(KIND_TYPE[kind], b));
  return out;
}

export const ENVOY_BIN = path.join(repoRoot(), '.venv', 'envoy');

export function requireEnvoy(): string {
  if (!fs.existsSync(ENVOY_BIN)) {
    throw new Error(`Envoy binary not found at ${ENVOY_BIN}: run \`bash scripts/setup-envoy.sh\` first`);
  }
  return ENVOY_BIN;
}

/** The static bootstrap `envoy --mode validate` checks (src/envoy/validate.ts). */
export { staticBootstrap } from '../../src/envoy/validate';
export type { EnvoyRun } from '../../src/envoy/validate';

/** Runs `envoy --mode validate` on a binary bootstrap (.pb, encoded with our own protos). */
export function envoyValidate(bootstrap: Record<string, unknown>, label: string): EnvoyRun {
  return runEnvoyValidate(requireEnvoy(), bootstrap, label);
}
