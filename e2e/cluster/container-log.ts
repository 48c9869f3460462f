import * as fs from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * Container logs as the kubelet keeps them: one file per container run, each line stored with the
 * time it was written and its stream (`<RFC3339Nano> stdout|stderr <text>`), so `kubectl logs`
 * options that depend on time (sinceTime, sinceSeconds, timestamps) can be honoured.
 */

/** Copies a process's stdout and stderr into `file`, one timestamped record per line. */
export function captureOutput(file: string, stdout: Readable, stderr: Readable): void {
  const out = fs.createWriteStream(file, { flags: 'a' });
  let open = 2;
  const pump = (stream: Readable, name: 'stdout' | 'stderr') => {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      const at = new Date().toISOString();
      if (parts.length) out.write(parts.map((l) => `${at} ${name} ${l}\n`).join(''));
    });
    stream.on('end', () => {
      if (partial) out.write(`${new Date().toISOString()} ${name} ${partial}\n`);
      if (--open === 0) out.end();
    });
  };
  pump(stdout, 'stdout');
  pump(stderr, 'stderr');
}

export interface LogQuery {
  sinceTime?: string;
  sinceSeconds?: number;
  tailLines?: number;
  timestamps?: boolean;
  limitBytes?: number;
}

/** The text `kubectl logs` shows for a stored log with these options. */
export function renderLog(stored: string, q: LogQuery, now = Date.now()): string {
  const since = q.sinceTime
    ? Date.parse(q.sinceTime)
    : q.sinceSeconds !== undefined
      ? now - q.sinceSeconds * 1000
      : undefined;
  let lines: string[] = [];
  for (const rec of stored.split('\n')) {
    const m = /^(\S+) (?:stdout|stderr) (.*)$/.exec(rec);
    if (!m) continue;
    if (since !== undefined && Date.parse(m[1]) < since) continue;
    lines.push(q.timestamps ? `${m[1]} ${m[2]}` : m[2]);
  }
  if (q.tailLines !== undefined) lines = q.tailLines > 0 ? lines.slice(-q.tailLines) : [];
  let text = lines.map((l) => `${l}\n`).join('');
  if (q.limitBytes !== undefined) text = Buffer.from(text).subarray(0, q.limitBytes).toString('utf8');
  return text;
}
