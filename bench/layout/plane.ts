/**
 * The listener-layout benchmark's planes: Convoy's xDS cache and ADS server on loopback, one real
 * Envoy bootstrapped against it (delta or SotW ADS), and TLS clients that talk to that Envoy only.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { XdsCache } from '../../src/xds/cache';
import { AdsServer } from '../../src/xds/server';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { silentLogger } from '../../src/observability/logger';
import { renderBootstrapYaml } from '../../src/envoy/bootstrap';
import { translateFleet } from '../../src/envoy/translate';
import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';
import type { FleetModel } from '../../src/model/fleet';
import { EnvoyProcess } from '../../e2e/harness/envoy';
import { freePort } from '../../e2e/harness/ports';
import { LAYOUT_FLEET } from './world';

/** Convoy's cache and ADS server for one fleet. */
export class ControlPlane {
  readonly cache = new XdsCache({ logger: silentLogger(), metrics: new ConvoyMetrics() });
  private ads: AdsServer | undefined;
  port = 0;

  /** `threshold`: the `auto` layout's (translate/layout-choice.ts); its default when absent. */
  constructor(
    readonly layout: ListenerLayout,
    readonly threshold?: number,
  ) {}

  /** Translates and publishes a model; throws when the cache rejects it. */
  publish(model: FleetModel): void {
    const res = translateFleet(model, {
      bindAddress: '127.0.0.1',
      listenerLayout: this.layout,
      ...(this.threshold ? { listenerLayoutThreshold: this.threshold } : {}),
    });
    const r = this.cache.setFleet(LAYOUT_FLEET, res);
    if (!r.ok) throw new Error(`snapshot rejected: ${r.errors.slice(0, 3).join('; ')}`);
  }

  async listen(): Promise<void> {
    this.ads = new AdsServer({ cache: this.cache, logger: silentLogger(), metrics: new ConvoyMetrics() });
    this.port = await this.ads.listen('127.0.0.1:0');
  }

  async stop(): Promise<void> {
    await this.ads?.stop(500);
  }
}

/** Starts one real Envoy (one worker) against the control plane. */
export async function startEnvoy(cp: ControlPlane, sotw: boolean, name: string): Promise<EnvoyProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-layout-'));
  const adminPort = await freePort();
  const configPath = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(
    configPath,
    renderBootstrapYaml({
      xdsAddress: `127.0.0.1:${cp.port}`,
      gateway: LAYOUT_FLEET,
      nodeId: name,
      adminAddress: `127.0.0.1:${adminPort}`,
      sotw,
      listenerLayout: cp.layout,
    }),
  );
  const envoy = await EnvoyProcess.start({
    configPath,
    name,
    logLevel: 'warning',
    workDir: dir,
    drainTimeS: 1,
  });
  await envoy.waitLive(600_000);
  return envoy;
}

/** One HTTPS request with its own TLS connection: SNI `sni` (none when undefined), Host `host`. */
export function request(
  port: number,
  sni: string | undefined,
  host: string,
  timeoutMs = 5000,
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        headers: { host },
        servername: sni ?? '',
        rejectUnauthorized: false,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end();
  });
}

/** Waits until a request with this SNI is answered `status`, polling. */
export async function waitServed(
  port: number,
  sni: string,
  status: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await request(port, sni, sni, 2000);
    if ('status' in r && r.status === status) return;
    if (Date.now() > deadline)
      throw new Error(`${sni}: not answered ${status} in time (${JSON.stringify(r)})`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Waits until a TLS handshake with this SNI fails (the hostname is no longer served). */
export async function waitGone(port: number, sni: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await request(port, sni, sni, 2000);
    if ('error' in r) return;
    if (Date.now() > deadline) throw new Error(`${sni}: still served`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** A kept-alive TLS connection on which requests can be sent one by one (HTTP/1.1). */
export class OpenConnection {
  private constructor(
    private readonly socket: tls.TLSSocket,
    private readonly host: string,
  ) {}

  static open(port: number, sni: string): Promise<OpenConnection> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({
        host: '127.0.0.1',
        port,
        servername: sni,
        rejectUnauthorized: false,
        ALPNProtocols: ['http/1.1'],
      });
      s.once('secureConnect', () => resolve(new OpenConnection(s, sni)));
      s.once('error', reject);
    });
  }

  /** Sends GET / and resolves the status line, or rejects when the connection is gone. */
  get(): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) return reject(new Error('closed'));
      let buf = '';
      const onData = (c: Buffer) => {
        buf += c.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const len = /content-length: *(\d+)/i.exec(buf.slice(0, end));
        if (len && buf.length < end + 4 + Number(len[1])) return;
        cleanup();
        resolve(buf.slice(0, buf.indexOf('\r\n')));
      };
      const onClose = () => {
        cleanup();
        reject(new Error('connection closed'));
      };
      const cleanup = () => {
        this.socket.off('data', onData);
        this.socket.off('close', onClose);
      };
      this.socket.on('data', onData);
      this.socket.on('close', onClose);
      this.socket.write(`GET / HTTP/1.1\r\nhost: ${this.host}\r\n\r\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
