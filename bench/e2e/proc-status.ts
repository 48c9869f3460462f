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

/** Clock ticks per second of /proc/PID/stat's times (USER_HZ, 100 on Linux for every architecture in use). */
const USER_HZ = 100;

/**
 * CPU seconds (user + system, all threads) from the text of /proc/PID/stat, or undefined. The
 * fields are read after the last ')', because the command name in parentheses may hold spaces.
 */
export function statCpuSeconds(text: string): number | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  // After ") ": state is field 3 of the line, so utime (14) and stime (15) are at 11 and 12.
  const f = text.slice(close + 2).split(' ');
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / USER_HZ : undefined;
}

/** CPU seconds process `pid` has used so far (NaN once it has exited). */
export function cpuSeconds(pid: number): number {
  try {
    return statCpuSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')) ?? NaN;
  } catch {
    return NaN;
  }
}
