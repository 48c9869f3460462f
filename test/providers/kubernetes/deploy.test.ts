import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { buildBootstrap, renderXdsSdsFiles } from '../../../src/envoy/bootstrap';
import type { BootstrapOptions } from '../../../src/envoy/bootstrap';
import { RESOURCE_TYPES, XLISTENERSET_RESOURCE } from '../../../src/kubernetes/resources';
import { repoRoot } from '../../support/repo';

/** The deployment artifacts stay in step with the code: bootstraps, RBAC, Deployment shape. */

const ROOT = repoRoot();
const DEPLOY = path.join(ROOT, 'deploy');

interface K8sDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

function docs(file: string): K8sDoc[] {
  return parseAllDocuments(fs.readFileSync(path.join(DEPLOY, file), 'utf8'))
    .map((d) => d.toJS() as K8sDoc)
    .filter(Boolean);
}

function allDocs(): K8sDoc[] {
  return fs
    .readdirSync(DEPLOY)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap(docs);
}

function find(kind: string, name: string): K8sDoc {
  const d = allDocs().find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(d, `${kind} ${name} in deploy/`);
  return d;
}

describe('deploy/ artifacts', () => {
  /** The options deploy/regenerate.sh passes to `convoy bootstrap` for the Kubernetes fleet. */
  const k8sBootstrap: BootstrapOptions = {
    xdsAddress: 'convoy-xds.convoy-system.svc:18000',
    gateway: 'convoy-system/convoy-gateway',
    nodeId: 'envoy',
    tls: {
      certFile: '/etc/convoy-xds/tls.crt',
      keyFile: '/etc/convoy-xds/tls.key',
      caFile: '/etc/convoy-xds/ca.crt',
      sdsDir: '/etc/envoy',
      sdsPrefix: 'bootstrap.',
    },
  };

  test('the Envoy bootstrap ConfigMap holds bootstrap/kubernetes/ byte for byte: mTLS, SDS files', () => {
    const cm = find('ConfigMap', 'convoy-gateway-envoy-bootstrap') as K8sDoc & {
      data: Record<string, string>;
    };
    const names = [
      'bootstrap.xds-client-certificate.yaml',
      'bootstrap.xds-trusted-ca.yaml',
      'bootstrap.yaml',
    ];
    assert.deepEqual(Object.keys(cm.data).sort(), names);
    for (const name of names) {
      const file = fs.readFileSync(path.join(ROOT, 'bootstrap', 'kubernetes', name), 'utf8');
      assert.equal(cm.data[name], file, `${name} stale: run deploy/regenerate.sh`);
    }
    assert.deepEqual(parse(cm.data['bootstrap.yaml']!), buildBootstrap(k8sBootstrap));
    for (const [name, text] of Object.entries(renderXdsSdsFiles(k8sBootstrap.tls!))) {
      assert.deepEqual(parse(cm.data[name]!), parse(text), name);
    }
    assert.equal(cm.metadata.namespace, 'convoy-system');
  });

  test("docker-compose.yml's Envoy starts from bootstrap/compose/, made for Gateway default/demo with mTLS", () => {
    const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: { envoy: { command: string[]; volumes: string[] } };
    };
    assert.ok(compose.services.envoy.volumes.includes('./bootstrap/compose:/etc/envoy:ro'));
    assert.equal(
      compose.services.envoy.command[compose.services.envoy.command.indexOf('-c') + 1],
      '/etc/envoy/envoy.yaml',
    );
    const dir = path.join(ROOT, 'bootstrap', 'compose');
    const options: BootstrapOptions = {
      xdsAddress: 'convoy:18000',
      gateway: 'default/demo',
      nodeId: 'compose-envoy',
      tls: {
        certFile: '/etc/convoy-xds/default/demo/tls.crt',
        keyFile: '/etc/convoy-xds/default/demo/tls.key',
        caFile: '/etc/convoy-xds/default/demo/ca.crt',
        sdsDir: '/etc/envoy',
        sdsPrefix: 'envoy.',
      },
    };
    assert.deepEqual(parse(fs.readFileSync(path.join(dir, 'envoy.yaml'), 'utf8')), buildBootstrap(options));
    for (const [name, text] of Object.entries(renderXdsSdsFiles(options.tls!))) {
      assert.deepEqual(parse(fs.readFileSync(path.join(dir, name), 'utf8')), parse(text), name);
    }
  });

  test('docker-compose.yml: certgen first; the CA key volume never reaches Envoy', () => {
    const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<
        string,
        { volumes?: string[]; command?: string[]; depends_on?: Record<string, unknown> }
      >;
    };
    const envoyVolumes = compose.services.envoy!.volumes ?? [];
    assert.ok(
      !envoyVolumes.some((v) => v.startsWith('xds-ca:') || v.startsWith('xds-server:')),
      envoyVolumes.join(),
    );
    assert.ok(envoyVolumes.includes('xds-gateways:/etc/convoy-xds:ro'));
    assert.deepEqual(compose.services.convoy!.depends_on, {
      certgen: { condition: 'service_completed_successfully' },
    });
    assert.ok(!compose.services.convoy!.command!.includes('--insecure-plaintext-xds'));
    assert.deepEqual(compose.services.certgen!.command, [
      'certgen',
      '--server-name',
      'convoy',
      '--gateway',
      'default/demo',
    ]);
  });

  test('the Secrets deploy/xds-certs.sh makes are the ones the pods mount, for the names they dial', () => {
    const script = fs.readFileSync(path.join(DEPLOY, 'xds-certs.sh'), 'utf8');
    assert.match(
      script,
      /--server-name convoy-xds\.convoy-system\.svc /,
      'the name in the bootstrap address',
    );
    assert.match(script, /--gateway convoy-system\/convoy-gateway/, 'the node.cluster of the fleet');
    assert.match(script, /apply_secret convoy-xds-server "\$PKI\/server"/);
    assert.match(
      script,
      /apply_secret convoy-gateway-xds-client "\$PKI\/gateways\/convoy-system\/convoy-gateway"/,
    );
    type Pod = {
      spec: {
        template: {
          spec: {
            containers: { volumeMounts: { name: string; mountPath: string }[] }[];
            volumes: { name: string; secret?: { secretName: string } }[];
          };
        };
      };
    };
    const mountOf = (deployment: string, secret: string) => {
      const pod = (find('Deployment', deployment) as K8sDoc & Pod).spec.template.spec;
      const volume = pod.volumes.find((v) => v.secret?.secretName === secret);
      assert.ok(volume, `${deployment} mounts Secret ${secret}`);
      return pod.containers[0]!.volumeMounts.find((m) => m.name === volume.name)?.mountPath;
    };
    assert.equal(
      mountOf('convoy-gateway-envoy', 'convoy-gateway-xds-client'),
      path.dirname(k8sBootstrap.tls!.certFile),
    );
    assert.equal(mountOf('convoy', 'convoy-xds-server'), '/etc/convoy/xds');
  });

  test('deploy/regenerate.sh reproduces the committed ConfigMap byte for byte', () => {
    // <outDir>/test/providers/kubernetes → <outDir>/src/cli/main.js
    const cli = path.resolve(__dirname, '..', '..', '..', 'src', 'cli', 'main.js');
    assert.ok(fs.existsSync(cli), `compiled CLI at ${cli}`);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-regen-'));
    try {
      execFileSync('bash', [path.join(DEPLOY, 'regenerate.sh'), out], {
        env: { ...process.env, CONVOY: `${process.execPath} ${cli}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const f of ['21-envoy-bootstrap.yaml']) {
        assert.equal(
          fs.readFileSync(path.join(out, f), 'utf8'),
          fs.readFileSync(path.join(DEPLOY, f), 'utf8'),
          `deploy/${f} is stale: run deploy/regenerate.sh`,
        );
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  test('XListenerSet RBAC lives apart: the base role has none, deploy/xlistenerset grants read + status', () => {
    type Role = K8sDoc & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    const base = find('ClusterRole', 'convoy') as Role;
    assert.ok(!base.rules.some((r) => r.apiGroups.includes(XLISTENERSET_RESOURCE.group)));
    const legacy = docs('xlistenerset/01-rbac-xlistenerset.yaml');
    const role = legacy.find((d) => d.kind === 'ClusterRole') as Role;
    const allowed = (resource: string, verb: string) =>
      role.rules.some(
        (r) =>
          r.apiGroups.includes(XLISTENERSET_RESOURCE.group) &&
          r.resources.includes(resource) &&
          r.verbs.includes(verb),
      );
    for (const verb of ['list', 'watch']) assert.ok(allowed(XLISTENERSET_RESOURCE.plural, verb), verb);
    assert.ok(allowed(`${XLISTENERSET_RESOURCE.plural}/status`, 'update'));
    assert.ok(!role.rules.some((r) => r.verbs.includes('create') || r.verbs.includes('delete')));
    const binding = legacy.find((d) => d.kind === 'ClusterRoleBinding') as K8sDoc & {
      roleRef: { name: string };
      subjects: { name: string; namespace: string }[];
    };
    assert.equal(binding.roleRef.name, role.metadata.name);
    assert.deepEqual(
      binding.subjects.map((x) => `${x.namespace}/${x.name}`),
      ['convoy-system/convoy'],
    );
  });

  test('the ClusterRole grants read on every kind the provider watches, and writes only status', () => {
    const role = find('ClusterRole', 'convoy') as K8sDoc & {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    const allowed = (group: string, resource: string, verb: string) =>
      role.rules.some(
        (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
      );
    for (const r of RESOURCE_TYPES) {
      for (const verb of ['list', 'watch']) {
        assert.ok(allowed(r.group, r.plural, verb), `${verb} ${r.group}/${r.plural}`);
      }
    }
    for (const plural of [
      'gatewayclasses',
      'gateways',
      'listenersets',
      'httproutes',
      'grpcroutes',
      'tlsroutes',
      'backendtlspolicies',
      'tcproutes',
      'udproutes',
    ]) {
      assert.ok(
        allowed('gateway.networking.k8s.io', `${plural}/status`, 'update'),
        `update ${plural}/status`,
      );
    }
    for (const rule of role.rules) {
      const writes = rule.verbs.filter((v) => !['get', 'list', 'watch'].includes(v));
      if (writes.length) {
        assert.ok(
          rule.resources.every((res) => res.endsWith('/status')),
          `write verbs ${writes} only on status: ${rule.resources}`,
        );
      }
      assert.ok(!rule.verbs.includes('*') && !rule.resources.includes('*'), 'no wildcards');
    }
    const leases = find('Role', 'convoy-leader-election') as K8sDoc & {
      rules: { resources: string[]; verbs: string[]; resourceNames?: string[] }[];
    };
    assert.equal(leases.metadata.namespace, 'convoy-system');
    assert.ok(leases.rules.every((r) => r.resources.length === 1 && r.resources[0] === 'leases'));
  });

  test('the Convoy Deployment: 2 replicas, required args, probes, non-root, read-only root filesystem', () => {
    const dep = find('Deployment', 'convoy') as K8sDoc & {
      spec: {
        replicas: number;
        template: {
          spec: {
            serviceAccountName: string;
            securityContext: Record<string, unknown>;
            containers: {
              args: string[];
              readinessProbe: { httpGet: { path: string; port: string } };
              livenessProbe: { httpGet: { path: string; port: string } };
              ports: { name: string; containerPort: number }[];
              resources: { requests: object; limits: object };
              securityContext: Record<string, unknown>;
            }[];
          };
        };
      };
    };
    assert.equal(dep.spec.replicas, 2);
    const pod = dep.spec.template.spec;
    assert.equal(pod.serviceAccountName, 'convoy');
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const c = pod.containers[0];
    assert.deepEqual(c.args, [
      'serve',
      '--xds-address',
      '0.0.0.0:18000',
      '--admin-address',
      '127.0.0.1:9090',
      '--health-address',
      '0.0.0.0:9091',
      '--leader-election-namespace',
      'convoy-system',
      '--envoy-service',
      'convoy-system/convoy-gateway-envoy',
      '--xds-tls-cert',
      '/etc/convoy/xds/tls.crt',
      '--xds-tls-key',
      '/etc/convoy/xds/tls.key',
      '--xds-tls-ca',
      '/etc/convoy/xds/ca.crt',
    ]);
    // The Service whose load-balancer address Gateways report is part of the same deploy/.
    assert.equal(find('Service', 'convoy-gateway-envoy').metadata.namespace, 'convoy-system');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    // Probes reach the health-only address; admin stays on loopback, so no port or Service names it.
    assert.equal(c.readinessProbe.httpGet.port, c.livenessProbe.httpGet.port);
    assert.equal(c.ports.find((p) => p.name === c.readinessProbe.httpGet.port)?.containerPort, 9091);
    assert.ok(!c.ports.some((p) => p.containerPort === 9090));
    assert.ok(!allDocs().some((d) => d.kind === 'Service' && JSON.stringify(d).includes('9090')));
    assert.ok(c.resources.requests && c.resources.limits);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    // The Dockerfile's user must be the one the Deployment runs as.
    const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, new RegExp(`^USER ${String(pod.securityContext.runAsUser)}:`, 'm'));
    assert.match(dockerfile, /^ENTRYPOINT \["convoy"\]/m);
  });

  test('the Envoy fleet serves the Gateway named in its bootstrap and is exposed by a LoadBalancer', () => {
    const gw = find('Gateway', 'convoy-gateway') as K8sDoc & { spec: { gatewayClassName: string } };
    assert.equal(gw.spec.gatewayClassName, find('GatewayClass', 'convoy').metadata.name);
    const cm = find('ConfigMap', 'convoy-gateway-envoy-bootstrap') as K8sDoc & {
      data: Record<string, string>;
    };
    const boot = parse(cm.data['bootstrap.yaml']) as { node: { cluster: string } };
    assert.equal(boot.node.cluster, `${gw.metadata.namespace}/${gw.metadata.name}`);
    const svc = find('Service', 'convoy-gateway-envoy') as K8sDoc & { spec: { type: string } };
    assert.equal(svc.spec.type, 'LoadBalancer');
    const xds = find('Service', 'convoy-xds') as K8sDoc & { spec: { ports: { port: number }[] } };
    assert.equal(xds.spec.ports[0].port, 18000);
  });
});
