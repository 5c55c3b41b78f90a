// A project's secrets: values its runs need (a registry token, a test API key), handed to the
// agent as environment variables. The rules on their names and values live here, for the API, the
// CLI and the dashboard alike. docs/guide/secrets.md.

/** `run`: every run of the project gets it; `setup`: the repository's setup step only (docs/guide/environments.md). */
export const SECRET_SCOPES = ['run', 'setup'] as const;
export type SecretScope = (typeof SECRET_SCOPES)[number];

/** Which step of a run asks for its environment: a setup step also gets the run's secrets. */
export type SecretStep = 'run' | 'setup';

/** The scopes a step's environment holds. */
export function scopesFor(step: SecretStep): SecretScope[] {
  return step === 'setup' ? ['setup', 'run'] : ['run'];
}

/** An environment variable's shape: upper case, digits and `_`, not starting with a digit. */
export const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

/** The largest value, in bytes of UTF-8: an environment variable, not a file. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

/** The most secrets one project holds. */
export const MAX_SECRETS_PER_PROJECT = 100;

/**
 * Names svc sets in a sandbox itself (paths, the proxies, its own SVC_* variables), or that change
 * how a program or git starts there: a project's secret never takes their place.
 */
const RESERVED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'LANG',
  'LC_ALL',
  'TERM',
  'TZ',
  'PWD',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'NODE_USE_ENV_PROXY',
  'NODE_OPTIONS',
  'BASH_ENV',
  'ENV',
  'IFS',
]);
const RESERVED_PREFIXES = ['SVC_', 'LD_', 'GIT_CONFIG'];

/** Why `name` cannot name a project's secret, or null when it can. */
export function secretNameRefusal(name: string): string | null {
  if (!SECRET_NAME.test(name))
    return 'must look like an environment variable: A-Z, 0-9 and _, not starting with a digit, at most 128';
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix)))
    return 'is set by svc in the sandbox (SVC_*, LD_*, GIT_CONFIG*, PATH, HOME, the proxies and the like)';
  return null;
}

/** Why `value` cannot be a secret's value, or null when it can. */
export function secretValueRefusal(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (new TextEncoder().encode(value).length > MAX_SECRET_VALUE_BYTES)
    return `must be at most ${MAX_SECRET_VALUE_BYTES} bytes`;
  if (value.includes('\0')) return 'must not contain a NUL character (an environment variable cannot hold one)';
  return null;
}
