/**
 * Reading `go test -v` output of the Gateway API conformance suite: results and output per
 * TestConformance subtest (ShortName), with the suite's repeated poll messages folded. Shared by
 * the status-only lane (run.ts) and the run with traffic (traffic.ts).
 */

/** The text of a suite log line without its timestamp, to fold repeated poll messages. */
function withoutTimestamp(line: string): string {
  return line.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z:? ?/g, '');
}

/**
 * A test's output with repeated lines (the suite logs the same mismatch on every 100 ms poll)
 * folded into their first occurrence plus a count.
 */
export function foldRepeats(lines: string[]): string[] {
  const firstAt = new Map<string, { index: number; line: string; count: number }>();
  const out: string[] = [];
  for (const l of lines) {
    const key = withoutTimestamp(l);
    const f = firstAt.get(key);
    if (!f) {
      firstAt.set(key, { index: out.length, line: l, count: 1 });
      out.push(l);
    } else {
      f.count++;
      out[f.index] = `${f.line} (repeated ${f.count}×)`;
    }
  }
  return out;
}

export type TestOutcome = 'PASS' | 'FAIL' | 'SKIP';

export interface GoTestResult {
  name: string;
  outcome: TestOutcome;
  seconds: number;
  /** Lines the suite printed for this test (its subtests included). */
  output: string[];
}

const MARKER = /^=== (RUN|PAUSE|CONT|NAME)\s+TestConformance\/([^/\s]+)/;
const RESULT = /^(\s*)--- (PASS|FAIL|SKIP): TestConformance(?:\/([^\s]+))? \(([\d.]+)s\)/;

/** Incremental parser of `go test -v` output for the subtests of TestConformance. */
export class GoTestParser {
  readonly results = new Map<string, GoTestResult>();
  readonly setupOutput: string[] = [];
  overall?: TestOutcome;
  private current: string | undefined;
  private readonly outputs = new Map<string, string[]>();

  constructor(private readonly onResult?: (r: GoTestResult) => void) {}

  line(text: string): void {
    const m = MARKER.exec(text);
    if (m) {
      this.current = m[2];
      this.out(this.current).push(text);
      return;
    }
    const r = RESULT.exec(text);
    if (r) {
      const full = r[3];
      if (full === undefined) {
        this.overall = r[2] as TestOutcome;
        this.current = undefined;
        return;
      }
      const name = full.split('/')[0];
      this.current = name;
      this.out(name).push(text);
      if (!full.includes('/')) {
        const result: GoTestResult = {
          name,
          outcome: r[2] as TestOutcome,
          seconds: Number(r[4]),
          output: this.out(name),
        };
        this.results.set(name, result);
        this.onResult?.(result);
      }
      return;
    }
    if (/^=== (RUN|NAME)\s+TestConformance$/.test(text)) {
      this.current = undefined;
      return;
    }
    if (this.current && /^\s/.test(text)) this.out(this.current).push(text);
    else this.setupOutput.push(text);
  }

  private out(name: string): string[] {
    let o = this.outputs.get(name);
    if (!o) this.outputs.set(name, (o = []));
    return o;
  }
}

/** `^TestConformance$/^(A|B|...)$` */
export function testRunPattern(names: string[]): string {
  return `^TestConformance$/^(${names.join('|')})$`;
}
