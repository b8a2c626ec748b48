import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

export type LoggerOptions = {
  level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON: for a developer's terminal only. */
  pretty?: boolean;
  /** Where lines go (default stdout); tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
};

/** JSON lines; never tokens, cookies or bodies (they are redacted where they could appear). */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings: pino.LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.password', '*.authorization', '*.cookie'],
  };
  const destination = options.destination ?? (options.pretty ? pretty({ colorize: true, sync: true, ignore: 'pid,hostname' }) : undefined);
  return destination ? pino(settings, destination) : pino(settings);
}

/** Pretty output when a developer watches the terminal; JSON lines anywhere else (files, collectors). */
export const wantsPrettyLogs = (production: boolean): boolean => !production && process.stdout.isTTY === true;
