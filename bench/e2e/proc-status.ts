/**
 * Reads a process's memory figures from Linux /proc/PID/status: VmRSS (resident now) and VmHWM
 * (the peak resident size since the process started). The parser is pure and unit-tested.
 */
import * as fs from 'node:fs';

/** The value of a `Field:   123 kB` line of /proc/PID/status in bytes, or undefined. */
export function statusFieldBytes(text: string, field: string): number | undefined {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Current and peak resident memory of process `pid` in bytes (undefined once it has exited). */
export function residentMemory(pid: number): { rss: number; peak: number } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const rss = statusFieldBytes(text, 'VmRSS');
  const peak = statusFieldBytes(text, 'VmHWM');
  return rss === undefined || peak === undefined ? undefined : { rss, peak };
}
