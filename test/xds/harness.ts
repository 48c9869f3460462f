import { silentLogger } from '../../src/observability/logger';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { XdsCache } from '../../src/xds/cache';
import { AdsServer } from '../../src/xds/server';
import type { AdsServerOptions } from '../../src/xds/server';
import { AdsClient } from '../support/ads-client';
import type { AdsClientOptions, AdsResponse } from '../support/ads-client';

/** An in-process cache + ADS server on 127.0.0.1:0, and clients that are closed on stop(). */
export class Harness {
  readonly metrics = new ConvoyMetrics();
  readonly logger = silentLogger();
  readonly cache = new XdsCache({ logger: this.logger, metrics: this.metrics });
  server!: AdsServer;
  address = '';
  private readonly clients: AdsClient[] = [];

  static async start(opts: Partial<AdsServerOptions> = {}): Promise<Harness> {
    const h = new Harness();
    await h.startServer(opts);
    return h;
  }

  async startServer(opts: Partial<AdsServerOptions> = {}): Promise<void> {
    this.server = new AdsServer({ cache: this.cache, logger: this.logger, metrics: this.metrics, ...opts });
    const port = await this.server.listen('127.0.0.1:0');
    this.address = `127.0.0.1:${port}`;
  }

  client(opts: Partial<AdsClientOptions> & { fleet?: string; id?: string } = {}): AdsClient {
    const c = new AdsClient({
      address: this.address,
      node: { id: opts.id ?? `envoy-${this.clients.length}`, cluster: opts.fleet ?? 'default/gw' },
      ...opts,
    });
    this.clients.push(c);
    return c;
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    await this.server.stop(500);
  }

  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const m = await this.metrics.registry.getSingleMetric(name)?.get();
    let total = 0;
    for (const v of m?.values ?? []) {
      if (Object.entries(labels).every(([k, val]) => v.labels[k] === val)) total += v.value;
    }
    return total;
  }
}

/**
 * Waits `ms` and returns the responses received meanwhile: the grace period of a check that
 * nothing is sent. An absence has no event to wait for, so callers first wait (with `until`)
 * for the server to have processed what they sent; a slow machine then only shortens the
 * window in which a wrong response would be seen, and never fails a correct server.
 */
export async function quiet(c: AdsClient, ms = 150): Promise<AdsResponse[]> {
  const start = c.received;
  await new Promise((r) => setTimeout(r, ms));
  return c.responses.filter((r) => r.seq >= start);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls a condition (for server-side state that is not visible on the wire). */
export async function until(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
