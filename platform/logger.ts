// svc's structured log: JSON lines (pino) on stderr, one level for the whole process
// (SVC_LOG_LEVEL), and a last line of defence that no secret is ever written: every line passes
// through a filter that replaces each registered secret (platform/secrets.ts: the operator token,
// forge credentials, the database password) before it leaves the process. Stdout stays for what a human reads
// (`svc serve`'s URLs, CLI output).
import pino, { type DestinationStream, type Logger } from 'pino';
import { maskKnownSecrets } from './secrets.ts';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export type { Logger };

const REDACTED = '[redacted]';

function maskingStream(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(maskKnownSecrets(line)) };
}

function createLogger(level: LogLevelName, destination: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Credential-shaped fields are dropped by name before the line is even serialized.
      redact: {
        paths: ['authorization', 'token', 'gitToken', 'password', 'taskToken', 'headers.authorization', '*.token'],
        censor: REDACTED,
      },
    },
    maskingStream(destination),
  );
}

/** A level name from SVC_LOG_LEVEL (default info); anything else is a configuration mistake. */
export function parseLogLevel(value: string | undefined): LogLevelName {
  const level = (value?.trim().toLowerCase() || 'info') as LogLevelName;
  if (!LOG_LEVELS.includes(level))
    throw new Error(`SVC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${value}"`);
  return level;
}

// Until start-up configures it (loadConfig validates SVC_LOG_LEVEL and says what is wrong with it).
let root: Logger = createLogger(
  LOG_LEVELS.find((level) => level === process.env.SVC_LOG_LEVEL?.toLowerCase()) ?? 'info',
  pino.destination({ fd: 2, sync: true }),
);

/** Sets the process's level (and, for tests, where lines go). Called once at start-up. */
export function configureLogging(options: { level: LogLevelName; destination?: DestinationStream }): Logger {
  root = createLogger(options.level, options.destination ?? pino.destination({ fd: 2, sync: true }));
  return root;
}

/** The process's logger, or a child carrying fixed fields (`{component: 'api'}`, a request id…). */
export function logger(bindings?: Record<string, unknown>): Logger {
  return bindings ? root.child(bindings) : root;
}
