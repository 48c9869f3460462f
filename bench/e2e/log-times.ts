/**
 * Finds when `convoy serve` logged a message, from its JSON log (CONVOY_LOG_FORMAT=json: pino
 * lines with `time` in ms since the epoch and `msg`). Pure; unit-tested. The bench uses it to
 * place moments it cannot observe from outside, such as the end of the initial LIST.
 */

/** The `time` of the first JSON log line whose `msg` is `msg`, or undefined. */
export function firstLogTime(log: string, msg: string): number | undefined {
  for (const line of log.split('\n')) {
    if (!line.startsWith('{') || !line.includes(msg)) continue;
    try {
      const entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
      if (entry.msg === msg && typeof entry.time === 'number') return entry.time;
    } catch {
      // A line cut off by a crash or interleaved output: not ours.
    }
  }
  return undefined;
}
