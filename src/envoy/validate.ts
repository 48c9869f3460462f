import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { messageType } from './protos';
import type { EnvoyResources } from './resources';
import { INVALID_BACKEND_CLUSTER } from './translate/routes';

/**
 * Checks translated resources with a real Envoy (`envoy --mode validate`), for `convoy translate
 * --validate` and the tests: the resources become one static bootstrap in which anything that does
 * not line up (a route configuration, cluster or secret that is named but missing) makes Envoy
 * reject the file.
 */

type Obj = Record<string, unknown>;
const HCM_TYPE =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

/**
 * A bootstrap that holds the resources as static_resources: every HCM gets its RouteConfiguration
 * inline (route_config instead of rds), every cluster becomes STATIC with its ClusterLoadAssignment
 * as load_assignment, and SDS references lose their sds_config so they resolve to the static
 * secrets by name. Throws when a named route configuration or assignment is missing. Accepts the
 * typed objects of the translator and their proto-JSON decodings alike (Any as `@type`).
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
    // A cluster with its own load_assignment (a UDP port's weighted cluster) keeps it.
    const assignment = cla.get(c.name!) ?? (copy.load_assignment as Obj | undefined);
    if (!assignment) missing.push(`load assignment ${c.name}`);
    copy.load_assignment = assignment ?? { cluster_name: c.name };
    // An upstream TLS context's client certificate (docs/gateway-api.md §24) resolves statically too.
    rewrite(copy.transport_socket);
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
  const bootstrap: Obj = { static_resources: { listeners, clusters, secrets: res.secrets } };
  // The SNI-dispatch layout's internal listeners (docs/xds.md §16) need their bootstrap extension.
  if (res.listeners.some((l) => l.internal_listener)) {
    bootstrap.bootstrap_extensions = [
      {
        name: 'envoy.bootstrap.internal_listener',
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.bootstrap.internal_listener.v3.InternalListener',
        },
      },
    ];
  }
  return bootstrap;
}

export interface EnvoyRun {
  status: number | null;
  output: string;
}

/** Runs `<bin> --mode validate` on `bootstrap`, written as a binary bootstrap to a temporary folder. */
export function envoyValidate(bin: string, bootstrap: Obj, label: string): EnvoyRun {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-envoy-validate-'));
  try {
    const file = path.join(dir, `${label.replace(/[^A-Za-z0-9_.-]/g, '_')}.pb`);
    // Not encodeMessage: its optional schema check refuses proto-JSON (64-bit integers as text).
    const type = messageType('envoy.config.bootstrap.v3.Bootstrap');
    fs.writeFileSync(file, type.encode(type.fromObject(bootstrap)).finish());
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
