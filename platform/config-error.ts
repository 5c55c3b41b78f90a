// A mistake in svc's own configuration (an environment variable, the agents file, the embedded
// Temporal's settings): `svc serve` / `svc worker` say it in one line and exit 2 before starting
// anything (stack/preflight.ts).
export class ConfigurationError extends Error {
  constructor(message: string) {
    // One line, whatever the parser said (a YAML error spans several).
    super(message.replace(/\s*\n\s*/g, ' ').trim());
    this.name = 'ConfigurationError';
  }
}

/** Runs `read` and turns whatever it throws into a ConfigurationError (its message kept). */
export function asConfigurationError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError((error as Error)?.message ?? String(error));
  }
}
