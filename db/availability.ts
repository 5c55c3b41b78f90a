// Whether an error means "the database is not there right now" (down, restarting, unreachable),
// as opposed to a query that is wrong: the API answers the first with 503 and Retry-After.

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  // PostgreSQL: connection exceptions (08…), and the server shutting down or starting (57P0…).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  // SQLite: another process holds the file longer than the busy timeout.
  'SQLITE_BUSY',
]);

const CONNECTION_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
    'the database system is (starting up|shutting down)',
    'terminating connection',
  ].join('|'),
  'i',
);

export function isDatabaseUnavailable(error: unknown): boolean {
  for (
    let current = error as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown } | undefined,
      depth = 0;
    current && depth < 5;
    current = current.cause as typeof current, depth++
  ) {
    if (typeof current.code === 'string' && CONNECTION_CODES.has(current.code)) return true;
    if (typeof current.name === 'string' && /ConnectionException/.test(current.name)) return true;
    if (typeof current.message === 'string' && CONNECTION_MESSAGES.test(current.message)) return true;
  }
  return false;
}
