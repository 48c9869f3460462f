import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

/** Shared helpers for real-process tests: deadlines, temp dirs, log tails. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface WaitOptions {
  /** What we are waiting for, for the error message. */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Extra context for the error (e.g. the tail of a process log). */
  context?: () => string;
  /** Throw at once when this returns a message (e.g. the process exited). */
  abort?: () => string | undefined;
}

/**
 * Polls `check` until it returns a value other than undefined/false, or throws after the deadline
 * with the last error seen and the caller's context. Every wait in the harness goes through here.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  opts: WaitOptions,
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const aborted = opts.abort?.();
    if (aborted) throw new Error(`${opts.what}: ${aborted}${contextText(opts)}`);
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const last = lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what}${last}${contextText(opts)}`);
    }
    await sleep(intervalMs);
  }
}

function contextText(opts: WaitOptions): string {
  const c = opts.context?.();
  return c ? `\n${c}` : '';
}

/** A fresh directory under the OS temp dir; removed by the returned cleanup unless KEEP_E2E_TMP is set. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `convoy-${prefix}-`));
  return {
    dir,
    cleanup: () => {
      if (!process.env.KEEP_E2E_TMP) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The last `lines` lines of a file, or a note that it is missing. */
export function tailFile(file: string, lines = 40): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return `(no log at ${file})`;
  }
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

/** Root of the repository, found from the compiled location (<outDir>/e2e/harness) or the source. */
export function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (
      fs.existsSync(path.join(dir, 'package.json')) &&
      fs.existsSync(path.join(dir, 'scripts', 'setup-envoy.sh'))
    ) {
      return dir;
    }
  }
  throw new Error(`repository root not found above ${__dirname}`);
}

/** One HTTP request to a loopback admin server (Convoy's or Envoy's): status and body. */
export function loopbackRequest(
  port: number,
  pathAndQuery: string,
  opts: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathAndQuery,
        method: opts.method ?? 'GET',
        agent: false,
        headers: opts.headers,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${opts.method ?? 'GET'} ${pathAndQuery} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
