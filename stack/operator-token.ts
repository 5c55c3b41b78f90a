// The operator token: SVC_API_TOKEN when set, else one generated once and kept in a 0600 file in
// the data directory, so restarts keep the same token and other local users cannot read it.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface OperatorToken {
  token: string;
  source: 'environment' | 'file';
  path: string | undefined;
}

export function loadOperatorToken(fromEnv: string | undefined, tokenPath: string): OperatorToken {
  if (fromEnv) return { token: fromEnv, source: 'environment', path: undefined };
  try {
    const token = readFileSync(tokenPath, 'utf8').trim();
    if (token) return { token, source: 'file', path: tokenPath };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(tokenPath), { recursive: true });
  const token = mintOperatorToken();
  try {
    writeFileSync(tokenPath, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process won the race to create it: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOperatorToken(undefined, tokenPath);
    throw error;
  }
  chmodSync(tokenPath, 0o600);
  return { token, source: 'file', path: tokenPath };
}

/** 43 characters of base64url that never start with "-": a token must pass as a CLI flag value. */
export function mintOperatorToken(): string {
  for (;;) {
    const token = randomBytes(32).toString('base64url');
    if (/^[A-Za-z0-9]/.test(token)) return token;
  }
}
