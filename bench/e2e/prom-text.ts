/**
 * Reads Prometheus text exposition (Convoy's /metrics) into samples, and the sums and label
 * breakdowns the end-to-end bench compares before and after a change. Pure; unit-tested.
 */

/** One sample line: metric name, its labels and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Undoes the exposition format's escapes in a label value (\\, \" and \n). */
function unescapeLabel(v: string): string {
  return v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** Parses every sample line of `text`; comments, blank and malformed lines are skipped. */
export function parsePromText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const value = Number(m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = unescapeLabel(l[2]!);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** Whether any sample of metric `name` exists (a counter with no series yet has none). */
export function hasMetric(samples: readonly Sample[], name: string): boolean {
  return samples.some((s) => s.name === name);
}

/** Metric families declared by `# TYPE` lines (present even before a labelled counter has series). */
export function declaredMetrics(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) /gm)) out.add(m[1]!);
  return out;
}

/** Sum of every sample of metric `name`. */
export function sumOf(samples: readonly Sample[], name: string): number {
  let n = 0;
  for (const s of samples) if (s.name === name) n += s.value;
  return n;
}

/** The value of metric `name` per value of `label` (summed over any other labels). */
export function byLabel(samples: readonly Sample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name) continue;
    const k = s.labels[label] ?? '';
    out[k] = (out[k] ?? 0) + s.value;
  }
  return out;
}

/** Per label value, `after − before`, keeping only values that changed. */
export function counterDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}
