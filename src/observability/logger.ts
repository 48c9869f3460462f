import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/**
 * JSON logs by default; pretty when stdout is a terminal (operators reading by hand) unless
 * CONVOY_LOG_FORMAT=json forces JSON. Level from CONVOY_LOG_LEVEL or --log-level.
 */
export function createLogger(options: { level?: string; pretty?: boolean } = {}): Logger {
  const level = options.level ?? process.env.CONVOY_LOG_LEVEL ?? 'info';
  const pretty =
    options.pretty ?? (process.stdout.isTTY === true && process.env.CONVOY_LOG_FORMAT !== 'json');
  if (pretty) {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  return pino({ level, base: { app: 'convoy' } });
}

/** A logger that drops everything; for unit tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
