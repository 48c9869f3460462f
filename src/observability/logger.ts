import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/**
 * Creates Convoy's logger: JSON logs by default; pretty when stdout is a terminal (operators
 * reading by hand) unless CONVOY_LOG_FORMAT=json forces JSON. Level from CONVOY_LOG_LEVEL or
 * --log-level. JSON lines go to `destination` when given (serve passes a LogDestination, which
 * never blocks), else to pino's default stdout stream.
 */
export function createLogger(
  options: { level?: string; pretty?: boolean; destination?: { write(line: string): void } } = {},
): Logger {
  const level = options.level ?? process.env.CONVOY_LOG_LEVEL ?? 'info';
  const pretty =
    options.pretty ?? (process.stdout.isTTY === true && process.env.CONVOY_LOG_FORMAT !== 'json');
  if (pretty) {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  const jsonOptions = { level, base: { app: 'convoy' } };
  return options.destination ? pino(jsonOptions, options.destination) : pino(jsonOptions);
}

/** A logger that drops everything; for unit tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
