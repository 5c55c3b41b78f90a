// Where the CLI finds the server and its token: flags, then SVC_BASE_URL / SVC_API_TOKEN, then
// the client config file (SVC_CLIENT_CONFIG or ~/.svc/client.json), then the local default.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface ClientSettings {
  baseUrl: string;
  token: string | undefined;
}

interface ClientConfigFile {
  url?: string;
  token?: string;
}

function readConfigFile(env: NodeJS.ProcessEnv): ClientConfigFile {
  const path = env.SVC_CLIENT_CONFIG || join(homedir(), '.svc', 'client.json');
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as ClientConfigFile;
    return typeof parsed === 'object' && parsed ? parsed : {};
  } catch {
    return {};
  }
}

export function resolveClientSettings(
  flags: { url?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ClientSettings {
  const file = readConfigFile(env);
  return {
    baseUrl: (flags.url || env.SVC_BASE_URL || file.url || DEFAULT_BASE_URL).replace(/\/+$/, ''),
    token: flags.token || env.SVC_API_TOKEN || file.token || undefined,
  };
}
