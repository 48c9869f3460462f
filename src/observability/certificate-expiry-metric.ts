/**
 * The gauge convoy_listener_certificate_expiry_seconds (docs/operations.md §8), written straight to
 * Prometheus text with each listener's series prefix kept between scrapes.
 *
 * Why not a prom-client Gauge: it has one series per listener serving certificates (5,000 at
 * bench/ large), and a Gauge sets, hashes and formats every label on every scrape, 3–10 ms of the
 * serving thread per scrape at that size (docs/operations.md §8). The registry still sees a metric (for JSON and the registry listing), built
 * the slow way only when asked for.
 */

/** One listener's earliest certificate expiry (ms since the epoch). */
export interface CertificateExpiry {
  listener: string;
  notAfter: number;
}

const NAME = 'convoy_listener_certificate_expiry_seconds';
const HELP =
  'Seconds until the earliest certificate a listener serves expires (negative: expired, still served).';

/** Escapes a label value as the Prometheus text format requires (backslash, quote, newline). */
function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Seconds from `now` until `notAfter`, rounded as the gauge has always reported them. */
function secondsLeft(notAfter: number, now: number): number {
  return Math.round((notAfter - now) / 1000);
}

/**
 * The expiry gauge as a prom-client custom metric (registered with `Registry.registerMetric`) that
 * also renders its own text. `read` is set by the Controller (or the build thread's host) to the
 * current listeners; the value is computed at scrape time, so it is current without a build.
 */
export class CertificateExpiryMetric {
  readonly name = NAME;
  readonly help = HELP;
  readonly type = 'gauge';
  readonly aggregator = 'omit';
  readonly labelNames: readonly string[] = ['listener'];
  /** Series prefix (`name{listener="…"} `) per listener seen at the last scrape. */
  private prefixes = new Map<string, string>();

  constructor(private readonly read: () => Iterable<CertificateExpiry>) {}

  /** prom-client's view of the metric (used by `getMetricsAsJSON` and the slow text path). */
  get(): { name: string; help: string; type: string; aggregator: string; values: object[] } {
    const now = Date.now();
    const values = [...this.read()].map((c) => ({
      labels: { listener: c.listener },
      value: secondsLeft(c.notAfter, now),
    }));
    return { name: NAME, help: HELP, type: 'gauge', aggregator: 'omit', values };
  }

  /** Nothing to reset: the series come from `read` at each scrape. */
  reset(): void {}

  /**
   * Returns the metric family in Prometheus text format (no trailing newline, as prom-client's
   * per-metric text). Listeners' escaped prefixes are reused from the previous scrape and dropped
   * once a listener is gone, so memory follows the listeners that exist.
   */
  text(now: number = Date.now()): string {
    let out = '';
    for (const part of this.parts(now, () => false)) out += part;
    return out;
  }

  /**
   * Yields the same text as `text` in parts, ending a part whenever `due()` says the current turn
   * has done enough (checked every 256 series), so that a caller can give the event loop back
   * between parts: at 5,000 listeners one scrape's walk and formatting are tens of milliseconds
   * (docs/operations.md §8 "Scrape cost (session 18)"). The parts joined are `text(now)`.
   */
  *parts(now: number, due: () => boolean): Generator<string> {
    const lines = [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} gauge`];
    const next = new Map<string, string>();
    // After the first part, each part's first line follows the previous part's last one.
    let lead = '';
    let count = 0;
    for (const c of this.read()) {
      let prefix = next.get(c.listener) ?? this.prefixes.get(c.listener);
      if (prefix === undefined) prefix = `${NAME}{listener="${escapeLabelValue(c.listener)}"} `;
      next.set(c.listener, prefix);
      lines.push(prefix + String(secondsLeft(c.notAfter, now)));
      if (++count % 256 === 0 && due()) {
        yield lead + lines.join('\n');
        lines.length = 0;
        lead = '\n';
      }
    }
    this.prefixes = next;
    if (lines.length > 0) yield lead + lines.join('\n');
  }
}
