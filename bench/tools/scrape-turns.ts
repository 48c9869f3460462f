/**
 * The longest turn of the serving thread during one /metrics scrape's text, in process, at
 * bench/ large's 5,000 listeners serving certificates: the text as Convoy made it before session 18
 * (one turn: the reader's `served` walk, every series formatted, the body encoded) against
 * `ConvoyMetrics.textParts` (turns of ~2 ms, rows kept per fleet model), for a scrape right after
 * a build (a new fleet model) and one without (bench/README.md "Event loop (session 18)").
 *
 *   node dist/bench/tools/scrape-turns.js [--listeners 5000] [--scrapes 15]
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { ConvoyMetrics } from '../../src/observability/metrics';
import { ValidityOverlay } from '../../src/controller/validity-overlay';
import { CertificateValidityReader } from '../../src/controller/certificate-validity';
import type { FilterChainModel, FleetModel, SecretModel } from '../../src/model/fleet';

/** A fleet with one port of `n` Terminate chains, each with its own Secret. */
function fleetOf(n: number, salt: number): FleetModel {
  const secrets: SecretModel[] = [];
  const chains: FilterChainModel[] = [];
  for (let i = 0; i < n; i++) {
    const name = `tenant-${i % 50}/ls-${i}-cert`;
    secrets.push({
      name,
      certificateChain: '',
      privateKey: '',
      validity: { notBefore: 0, notAfter: Date.now() + (90 * 86400 + i * 37 + salt) * 1000 },
    });
    chains.push({
      name: `ListenerSet/tenant-${i % 50}/ls-${i}/https`,
      serverNames: [`ls-${i}.example.com`],
      mode: 'Terminate',
      protocol: 'HTTPS',
      secretNames: [name],
    } as FilterChainModel);
  }
  return {
    fleet: 'default/gw',
    ports: [{ name: 'https-443', port: 443, filterChains: chains }],
    clusters: [],
    secrets,
  } as unknown as FleetModel;
}

/** Runs `work` while a setImmediate ticker measures the longest gap between its ticks (ms). */
async function longestTurn(work: () => Promise<unknown>): Promise<{ longestMs: number; totalMs: number }> {
  let last = performance.now();
  let longest = 0;
  let running = true;
  const tick = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await new Promise<void>((r) => setImmediate(r));
  const t0 = performance.now();
  last = t0;
  await work();
  const totalMs = performance.now() - t0;
  tick();
  running = false;
  return { longestMs: longest, totalMs };
}

/** The scrape as before session 18: the reader's `served` over the fleets, the text in one turn. */
function oldText(
  metrics: ConvoyMetrics,
  fleets: () => FleetModel[],
  reader: CertificateValidityReader,
): Promise<string> {
  metrics.certificateExpiries = function* () {
    for (const [listener, certs] of reader.served(fleets()))
      yield { listener, notAfter: Math.min(...certs.map((c) => c.validity.notAfter)) };
  };
  return (async () => {
    const parts: string[] = [];
    for (const m of metrics.registry.getMetricsAsArray()) {
      if ((m as unknown) === metrics.certificateExpirySeconds)
        parts.push(metrics.certificateExpirySeconds.text());
      else parts.push(await metrics.registry.getSingleMetricAsString(m.name));
    }
    return `${parts.join('\n\n')}\n`;
  })();
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number): number => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { listeners: { type: 'string', default: '5000' }, scrapes: { type: 'string', default: '15' } },
  });
  const n = Number(values.listeners);
  const scrapes = Number(values.scrapes);
  const results: Record<string, { longestMs: number[]; totalMs: number[] }> = {};
  const record = (key: string, r: { longestMs: number; totalMs: number }): void => {
    results[key] ??= { longestMs: [], totalMs: [] };
    results[key].longestMs.push(r.longestMs);
    results[key].totalMs.push(r.totalMs);
  };
  for (let s = 0; s < scrapes; s++) {
    for (const side of ['before', 'after'] as const) {
      const metrics = new ConvoyMetrics({ processMetrics: true });
      let fleet = fleetOf(n, s);
      const reader = new CertificateValidityReader();
      const overlay = new ValidityOverlay(
        () => new Date(),
        () => {},
      );
      metrics.certificateExpiries = () => overlay.expiries([fleet]);
      // Warm: prefixes and, for the new side, rows of this fleet model.
      if (side === 'before') await oldText(metrics, () => [fleet], reader);
      else for await (const part of metrics.textParts()) Buffer.from(part);
      // A build: a new fleet model sharing nothing cached by identity.
      fleet = { ...fleet, ports: fleet.ports.map((p) => ({ ...p })) };
      for (const when of ['afterBuild', 'steady'] as const) {
        const r =
          side === 'before'
            ? await longestTurn(async () => {
                const text = await oldText(metrics, () => [fleet], reader);
                Buffer.byteLength(text);
                return Buffer.from(text);
              })
            : await longestTurn(async () => {
                const chunks: Buffer[] = [];
                for await (const part of metrics.textParts()) chunks.push(Buffer.from(part));
                return Buffer.concat(chunks);
              });
        record(`${side}/${when}`, r);
      }
    }
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([k, v]) => [
      k,
      {
        longestTurnMs: {
          median: round(median(v.longestMs)),
          min: round(Math.min(...v.longestMs)),
          max: round(Math.max(...v.longestMs)),
        },
        totalMs: { median: round(median(v.totalMs)) },
      },
    ]),
  );
  console.log(JSON.stringify({ node: process.version, listeners: n, scrapes, summary }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
