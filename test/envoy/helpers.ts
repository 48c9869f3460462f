import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { decodeMessage, encodeMessage } from '../../src/envoy/protos';
import { TypeUrl, messageNameOf, type EnvoyResources } from '../../src/envoy/resources';
import { INVALID_BACKEND_CLUSTER } from '../../src/envoy/translate/routes';
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

type Obj = Record<string, unknown>;
const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/**
 * A bootstrap that holds the translated resources as static_resources, for `envoy --mode validate`:
 * every HCM gets its RouteConfiguration inline (route_config instead of rds), every cluster becomes
 * STATIC with its ClusterLoadAssignment as load_assignment, and SDS references lose their
 * sds_config so they resolve to the static secrets by name. Anything that does not line up
 * (a missing route configuration, cluster or secret) makes Envoy reject the file.
 */
export function staticBootstrap(res: EnvoyResources): Obj {
  const routes = new Map(res.routes.map((r) => [r.name!, structuredClone(r)]));
  const cla = new Map(res.endpoints.map((e) => [e.cluster_name!, structuredClone(e)]));
  const missing: string[] = [];
  const rewrite = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(rewrite);
    if (!node || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    const o = node as Obj;
    if (o['@type'] === HCM_TYPE && o.rds) {
      const name = (o.rds as Obj).route_config_name as string;
      const rc = routes.get(name);
      if (!rc) missing.push(`route configuration ${name}`);
      delete o.rds;
      o.route_config = rc ?? { name };
    }
    if (Array.isArray(o.tls_certificate_sds_secret_configs)) {
      for (const s of o.tls_certificate_sds_secret_configs as Obj[]) delete s.sds_config;
    }
    for (const v of Object.values(o)) rewrite(v);
  };
  const listeners = res.listeners.map((l) => structuredClone(l));
  rewrite(listeners);
  const clusters = res.clusters.map((c) => {
    const copy = structuredClone(c) as Obj;
    delete copy.eds_cluster_config;
    copy.type = 0; // STATIC (numbers: protobufjs verify() rejects enum names)
    const assignment = cla.get(c.name!);
    if (!assignment) missing.push(`load assignment ${c.name}`);
    copy.load_assignment = assignment ?? { cluster_name: c.name };
    return copy;
  });
  if (missing.length) throw new Error('translation is inconsistent: missing ' + missing.join(', '));
  // Inline route configurations validate their clusters (RDS ones do not, by default); the stand-in
  // for invalid backendRefs must stay unknown in production, so it only exists here, empty.
  if (JSON.stringify(res.routes).includes(JSON.stringify(INVALID_BACKEND_CLUSTER))) {
    clusters.push({
      name: INVALID_BACKEND_CLUSTER,
      type: 0,
      load_assignment: { cluster_name: INVALID_BACKEND_CLUSTER },
    });
  }
  return { static_resources: { listeners, clusters, secrets: res.secrets } };
}

export interface EnvoyRun {
  status: number | null;
  output: string;
}

/** Runs `envoy --mode validate` on a binary bootstrap (.pb, encoded with our own protos). */
export function envoyValidate(bootstrap: Obj, label: string): EnvoyRun {
  const bin = requireEnvoy();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-envoy-validate-'));
  try {
    const file = path.join(dir, `${label}.pb`);
    fs.writeFileSync(file, encodeMessage('envoy.config.bootstrap.v3.Bootstrap', bootstrap));
    const r = spawnSync(
      bin,
      ['--mode', 'validate', '-c', file, '--log-level', 'warn', '--disable-hot-restart'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    if (r.error) throw r.error;
    return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
