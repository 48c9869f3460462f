/**
 * Renders the Kubernetes objects of one managed fleet (docs/architecture.md §13): a pure function
 * of the fleet model and the provisioner's settings, so the same inputs give byte-identical
 * objects and the rendering is golden-tested. Every object is named after the Gateway, lives in
 * its namespace, carries its infrastructure labels and annotations, and is owned by it (deleting
 * the Gateway lets the garbage collector delete the fleet).
 */
import type { ListenerLayout } from '../../envoy/translate/sni-dispatch';
import type { FleetModel, PortModel } from '../../model/fleet';
import { rangeBindPorts, rangePorts } from '../../model/port-range';
import type { ManagedFleetModel } from '../../model/managed-fleet';
import { fleetObjectName } from '../../model/managed-fleet';
import { renderBootstrapYaml, renderXdsSdsFiles } from '../../envoy/bootstrap';
import type { BootstrapTlsOptions } from '../../envoy/bootstrap';
import { fleetLabels, selectorLabels } from './labels';

/** Where the pod finds its files, and the ports of its helpers (never listener ports: see below). */
export const CONFIG_DIR = '/etc/envoy';
export const XDS_TLS_DIR = '/etc/convoy-xds';
export const ENVOY_ADMIN_ADDRESS = '127.0.0.1:19000';
export const READINESS_PORT = 19001;
export const SHUTDOWN_PORT = 19002;
/** Envoy runs as this non-root user (the distroless images' nonroot). */
export const ENVOY_UID = 65532;

/** The provisioner's settings that every fleet shares. */
export interface RenderSettings {
  /** What managed Envoys dial: Convoy's xDS address, `host:port`. */
  xdsAddress: string;
  /** Name Convoy's serving certificate carries when it differs from the xDS host. */
  xdsServerName?: string;
  /** Envoy image unless the parameters name one. */
  envoyImage: string;
  /** Image with the `convoy` command, for the shutdown-manager sidecar. */
  convoyImage: string;
  /** The listener layout Convoy serves (bootstrap.ts BootstrapOptions.listenerLayout). */
  listenerLayout?: ListenerLayout;
}

/** The fleet's xDS client certificate (and the CA of Convoy's serving certificate); absent in plaintext mode. */
export interface FleetCertificate {
  certPem: string;
  keyPem: string;
  caPem: string;
}

export type RenderedObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
};

/** Renders every object of a managed fleet, in the order they are applied. */
export function renderFleet(
  model: FleetModel & { managed: ManagedFleetModel },
  settings: RenderSettings,
  certificate: FleetCertificate | undefined,
): RenderedObject[] {
  const m = model.managed;
  const name = fleetObjectName(model.gateway.name);
  const labels = { ...m.labels, ...fleetLabels(model) };
  const meta = (extraAnnotations: Record<string, string> = {}) => ({
    name,
    namespace: model.gateway.namespace,
    labels,
    ...(Object.keys({ ...m.annotations, ...extraAnnotations }).length
      ? { annotations: { ...m.annotations, ...extraAnnotations } }
      : {}),
    ownerReferences: [
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        name: model.gateway.name,
        uid: m.gatewayUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  });
  const out: RenderedObject[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(), automountServiceAccountToken: false },
  ];
  if (certificate) {
    out.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(),
      type: 'kubernetes.io/tls',
      data: {
        'ca.crt': base64(certificate.caPem),
        'tls.crt': base64(certificate.certPem),
        'tls.key': base64(certificate.keyPem),
      },
    });
  }
  out.push({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(),
    data: configMapData(model, settings, !!certificate),
  });
  if (model.ports.length > 0) out.push(renderService(model, meta(m.service.annotations)));
  out.push(renderWorkload(model, settings, meta(), labels, !!certificate));
  out.push({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(model) } },
  });
  return out;
}

/** The bootstrap and SDS files, made by the same code as `convoy bootstrap`. */
function configMapData(model: FleetModel, settings: RenderSettings, mtls: boolean): Record<string, string> {
  const tls: BootstrapTlsOptions | undefined = mtls
    ? {
        certFile: `${XDS_TLS_DIR}/tls.crt`,
        keyFile: `${XDS_TLS_DIR}/tls.key`,
        caFile: `${XDS_TLS_DIR}/ca.crt`,
        sdsDir: CONFIG_DIR,
        ...(settings.xdsServerName ? { serverName: settings.xdsServerName } : {}),
      }
    : undefined;
  const bootstrap = renderBootstrapYaml({
    xdsAddress: settings.xdsAddress,
    gateway: model.fleet,
    // Each pod overrides node.id with its own name (--service-node); this is the fallback.
    nodeId: fleetObjectName(model.gateway.name),
    adminAddress: ENVOY_ADMIN_ADDRESS,
    readinessAddress: `0.0.0.0:${READINESS_PORT}`,
    ...(tls ? { tls } : {}),
    ...(settings.listenerLayout ? { listenerLayout: settings.listenerLayout } : {}),
  });
  return { 'envoy.yaml': bootstrap, ...(tls ? renderXdsSdsFiles(tls) : {}) };
}

/**
 * The Service: one port per listener port, targeting the port Envoy binds as non-root, and the
 * address spec.addresses requests (docs/operations.md §22).
 */
function renderService(model: FleetModel & { managed: ManagedFleetModel }, metadata: object): RenderedObject {
  const s = model.managed.service;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata as RenderedObject['metadata'],
    spec: {
      type: s.type,
      selector: selectorLabels(model),
      ports: model.ports.flatMap((p) => [
        { name: p.name, protocol: transportOf(p), port: p.port, targetPort: p.bindPort ?? p.port },
        ...rangeServicePorts(p),
      ]),
      ...(s.externalTrafficPolicy ? { externalTrafficPolicy: s.externalTrafficPolicy } : {}),
      ...(s.loadBalancerIP ? { loadBalancerIP: s.loadBalancerIP } : {}),
      ...(s.clusterIP ? { clusterIP: s.clusterIP } : {}),
    },
  };
}

/**
 * Returns the Service ports of a port range past its first port (docs/gateway-api.md §30), named
 * `<listener>-<port>` (unique: listener names hold one number). The pod template lists only the
 * first port of a range: container ports are informational, and a thousand of them would only
 * bloat every pod.
 */
function rangeServicePorts(p: PortModel): object[] {
  const binds = rangeBindPorts(p);
  return rangePorts(p).map((port, i) => ({
    name: `${p.name}-${port}`,
    protocol: 'TCP',
    port,
    targetPort: binds[i],
  }));
}

/** The Deployment or DaemonSet running Envoy plus the shutdown-manager sidecar that drains it. */
function renderWorkload(
  model: FleetModel & { managed: ManagedFleetModel },
  settings: RenderSettings,
  metadata: object,
  labels: Record<string, string>,
  mtls: boolean,
): RenderedObject {
  const w = model.managed.workload;
  const name = fleetObjectName(model.gateway.name);
  const annotations = model.managed.annotations;
  const template = {
    metadata: { labels, ...(Object.keys(annotations).length ? { annotations } : {}) },
    spec: {
      serviceAccountName: name,
      automountServiceAccountToken: false,
      // preStop drains for drainTimeout; the rest is Envoy's own exit.
      terminationGracePeriodSeconds: w.drainTimeoutSeconds + 15,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: ENVOY_UID,
        runAsGroup: ENVOY_UID,
        fsGroup: ENVOY_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      ...(w.nodeSelector ? { nodeSelector: w.nodeSelector } : {}),
      ...(w.tolerations ? { tolerations: w.tolerations } : {}),
      containers: [envoyContainer(model, settings, mtls), shutdownManagerContainer(model, settings)],
      volumes: [
        { name: 'config', configMap: { name } },
        ...(mtls ? [{ name: 'xds-tls', secret: { secretName: name, defaultMode: 0o440 } }] : []),
      ],
    },
  };
  const selector = { matchLabels: selectorLabels(model) };
  if (w.kind === 'DaemonSet') {
    return {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: metadata as RenderedObject['metadata'],
      spec: { selector, template },
    };
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata as RenderedObject['metadata'],
    spec: {
      replicas: w.replicas,
      selector,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template,
    },
  };
}

const RESTRICTED = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

function envoyContainer(
  model: FleetModel & { managed: ManagedFleetModel },
  settings: RenderSettings,
  mtls: boolean,
): object {
  const w = model.managed.workload;
  return {
    name: 'envoy',
    image: w.image ?? settings.envoyImage,
    command: ['envoy'],
    args: [
      '-c',
      `${CONFIG_DIR}/envoy.yaml`,
      '--service-node',
      '$(POD_NAME)',
      '--log-level',
      w.logLevel,
      '--drain-time-s',
      String(w.drainTimeoutSeconds),
      '--drain-strategy',
      'immediate',
    ],
    env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    ports: [
      ...model.ports.map((p) => ({
        name: p.name,
        containerPort: p.bindPort ?? p.port,
        protocol: transportOf(p),
      })),
      { name: 'ready', containerPort: READINESS_PORT, protocol: 'TCP' },
    ],
    readinessProbe: {
      httpGet: { path: '/ready', port: READINESS_PORT },
      periodSeconds: 5,
      failureThreshold: 2,
    },
    // Blocks until the shutdown manager has failed health checks and drained for drainTimeout.
    lifecycle: { preStop: { httpGet: { path: '/shutdown', port: SHUTDOWN_PORT } } },
    ...(w.resources ? { resources: w.resources } : {}),
    securityContext: RESTRICTED,
    volumeMounts: [
      { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
      ...(mtls ? [{ name: 'xds-tls', mountPath: XDS_TLS_DIR, readOnly: true }] : []),
    ],
  };
}

function shutdownManagerContainer(
  model: FleetModel & { managed: ManagedFleetModel },
  settings: RenderSettings,
): object {
  return {
    name: 'shutdown-manager',
    image: settings.convoyImage,
    args: [
      'envoy-shutdown-manager',
      '--listen',
      `0.0.0.0:${SHUTDOWN_PORT}`,
      '--envoy-admin',
      ENVOY_ADMIN_ADDRESS,
      '--drain-timeout',
      `${model.managed.workload.drainTimeoutSeconds}s`,
    ],
    ports: [{ name: 'shutdown', containerPort: SHUTDOWN_PORT, protocol: 'TCP' }],
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
    securityContext: RESTRICTED,
  };
}

/**
 * Returns the transport of a fleet port, for the Service and container ports: UDP for a UDP listener
 * (docs/gateway-api.md §28), TCP for every other. A UDP and a TCP port may share a number; their
 * names (`udp-53`, `tcp-53`) differ.
 */
function transportOf(port: FleetModel['ports'][number]): 'TCP' | 'UDP' {
  return port.l4?.protocol === 'UDP' ? 'UDP' : 'TCP';
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
