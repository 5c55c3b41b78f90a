// Where the CLI finds the server and its token: flags, then SVC_BASE_URL / SVC_API_TOKEN, then
// the client config file (SVC_CLIENT_CONFIG or ~/.svc/client.json, written by `svc login`), then
// the local default.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface ClientSettings {
  baseUrl: string;
  token: string | undefined;
}

export interface ClientConfigFile {
  url?: string;
  token?: string;
}

export function clientConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_CLIENT_CONFIG || join(homedir(), '.svc', 'client.json');
}

export function readClientConfig(env: NodeJS.ProcessEnv = process.env): ClientConfigFile {
  try {
    const parsed = JSON.parse(readFileSync(clientConfigPath(env), 'utf8')) as ClientConfigFile;
    return typeof parsed === 'object' && parsed ? parsed : {};
  } catch {
    return {};
  }
}

/**
 * Saves the client config readable by its owner only (0600, in a 0700 directory when svc makes it).
 * Written beside and renamed into place: a reader never sees half a file, and a symlink planted at
 * the path is replaced, not followed.
 */
export function writeClientConfig(config: ClientConfigFile, env: NodeJS.ProcessEnv = process.env): string {
  const path = clientConfigPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const staged = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(staged, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(staged, 0o600);
  renameSync(staged, path);
  return path;
}

export function resolveClientSettings(
  flags: { url?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ClientSettings {
  const file = readClientConfig(env);
  return {
    baseUrl: (flags.url || env.SVC_BASE_URL || file.url || DEFAULT_BASE_URL).replace(/\/+$/, ''),
    token: flags.token || env.SVC_API_TOKEN || file.token || undefined,
  };
}
