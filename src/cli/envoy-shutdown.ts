import * as http from 'node:http';
import { parseHostPort } from '../util/host-port';
import { parseDuration } from '../util/duration';
import { UsageError, defineCommand, parseCommand } from './args';

/**
 * `convoy envoy-shutdown-manager`: the sidecar that drains a managed Envoy before it stops
 * (docs/architecture.md §13). The Envoy container's preStop hook calls GET /shutdown; the first call
 * makes Envoy fail its health checks (/healthcheck/fail: load balancers and the readiness probe
 * take the pod out), drains its listeners gracefully (/drain_listeners?graceful), and every call
 * answers once the drain timeout has passed, so Envoy gets SIGTERM only after draining.
 */
export const envoyShutdownSpec = defineCommand({
  name: 'envoy-shutdown-manager',
  summary: 'drain the Envoy of a managed fleet pod when its preStop hook asks (sidecar)',
  options: {
    listen: {
      type: 'string',
      valueName: 'HOST:PORT',
      description: 'Where the preStop hook calls GET /shutdown.',
      default: '0.0.0.0:19002',
    },
    'envoy-admin': {
      type: 'string',
      valueName: 'HOST:PORT',
      description: "Envoy's admin address (loopback, in the same pod).",
      default: '127.0.0.1:19000',
    },
    'drain-timeout': {
      type: 'string',
      valueName: 'DURATION',
      description: 'How long listeners drain before /shutdown answers.',
      default: '30s',
    },
  },
  details: 'Only GET /shutdown is served; anything else is 404.',
});

/** POSTs to one Envoy admin path; resolves with the status code (0 when Envoy cannot be reached). */
export function postAdmin(admin: string, path: string): Promise<number> {
  const { host, port } = parseHostPort(admin, 'envoy-admin');
  return new Promise((resolve) => {
    const req = http.request({ host, port, path, method: 'POST', timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Starts draining once: fail health checks, then drain listeners gracefully; resolves after `drainMs`. */
export function drainer(admin: string, drainMs: number): () => Promise<void> {
  let draining: Promise<void> | undefined;
  return () =>
    (draining ??= (async () => {
      await postAdmin(admin, '/healthcheck/fail');
      await postAdmin(admin, '/drain_listeners?graceful');
      await new Promise((r) => setTimeout(r, drainMs));
    })());
}

export async function envoyShutdownCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(envoyShutdownSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  let drainMs: number;
  let listen: { host: string; port: number };
  try {
    drainMs = parseDuration(v['drain-timeout'], '--drain-timeout');
    listen = parseHostPort(v.listen, '--listen');
    parseHostPort(v['envoy-admin'], '--envoy-admin');
  } catch (err) {
    throw new UsageError((err as Error).message, 'envoy-shutdown-manager');
  }
  const drain = drainer(v['envoy-admin'], drainMs);
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/shutdown') {
      res.writeHead(404).end();
      return;
    }
    void drain().then(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('drained\n'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  // Runs until the pod stops it; loaded without serve's gRPC. The kubelet runs the Envoy
  // container's preStop and signals this sidecar (which has no hook) at the same moment, so a
  // SIGTERM starts the same drain and the sidecar stays up until it is over: exiting at once would
  // cut the preStop call short and Envoy would get SIGTERM undrained (docs/architecture.md §13).
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await drain().catch(() => undefined);
  server.close();
}
