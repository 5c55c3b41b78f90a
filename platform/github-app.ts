// A GitHub App's credentials: configured in the environment, or registered through /github-app/*
// and stored in the data directory (SVC_APP_CRED_STORE=data-dir). The stored file is 0600 and is
// never replaced by a later registration: only the operator removes it (DELETE /github-app).
import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dataPaths } from './config.ts';
import { registerSecret } from './secrets.ts';

/** What svc needs to act as an App: its id, its private key (PEM) and, once installed, the installation. */
export interface GitHubAppCredentials {
  appId: string;
  privateKey: string;
  installationId: string | null;
  /** Where they came from: the environment wins over the data directory. */
  source: 'env' | 'data-dir';
  /** The App's slug, when svc registered it (an App from the environment has none here). */
  slug?: string;
}

/** The App as GitHub's manifest conversion answered it, plus its installation once known. */
export interface StoredGitHubApp {
  appId: string;
  slug: string;
  privateKey: string;
  webhookSecret: string | null;
  clientId: string;
  clientSecret: string;
  htmlUrl: string;
  installationId: string | null;
  createdAt: string;
}

export class GitHubAppAlreadyStoredError extends Error {}

/** The shape of a PEM private key block (PKCS#1 RSA, SEC1 EC or PKCS#8), as GitHub hands App keys out. */
const PEM_PRIVATE_KEY =
  /^-----BEGIN (RSA |EC )?PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END \1PRIVATE KEY-----\s*$/;

/**
 * Whether `value` is a PEM private key that parses. What GitHub's conversion answers is taken only
 * as the key itself: a value that is not (a path, say) would otherwise be read as a file.
 */
export function isPemPrivateKey(value: string): boolean {
  if (!PEM_PRIVATE_KEY.test(value)) return false;
  try {
    return createPrivateKey(value).asymmetricKeyType !== undefined;
  } catch {
    return false;
  }
}

/**
 * A private key configured by the operator (SVC_GITHUB_APP_PRIVATE_KEY): a PEM (escaped newlines
 * allowed, as env files carry them) or the path of one. Never for a stored App's key.
 */
export function loadPrivateKey(value: string): string {
  const key = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readFileSync(value, 'utf8');
  registerSecret(key);
  return key;
}

/** The stored App, or null when none was stored (or the file is not one svc wrote). */
export function readStoredGitHubApp(dataDir: string): StoredGitHubApp | null {
  const path = dataPaths.githubApp(dataDir);
  if (!existsSync(path)) return null;
  let parsed: Partial<StoredGitHubApp>;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredGitHubApp>;
  } catch {
    return null;
  }
  const strings = ['appId', 'slug', 'privateKey', 'clientId', 'clientSecret', 'htmlUrl'] as const;
  if (!strings.every((key) => typeof parsed[key] === 'string' && parsed[key] !== '')) return null;
  // The key itself, never a path to one (a stored key is used as it is).
  if (!parsed.privateKey!.startsWith('-----BEGIN ')) return null;
  for (const secret of [parsed.privateKey, parsed.clientSecret, parsed.webhookSecret]) registerSecret(secret);
  return {
    ...(parsed as StoredGitHubApp),
    webhookSecret: parsed.webhookSecret ?? null,
    installationId: parsed.installationId ?? null,
  };
}

/** Writes `value` next to `path` (0600) and answers the temporary file. */
function writeTemporary(path: string, value: unknown): string {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return temporary;
}

/**
 * Stores a newly registered App (0600). Refuses to replace one already there: a hard link is
 * atomic and fails when the target exists, so two callbacks racing cannot both win.
 */
export function storeGitHubApp(dataDir: string, app: StoredGitHubApp): void {
  const path = dataPaths.githubApp(dataDir);
  const temporary = writeTemporary(path, app);
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new GitHubAppAlreadyStoredError(`a GitHub App is already stored in ${path}`);
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Records the stored App's installation: the last of the three facts svc needs to act as it. */
export function storeGitHubAppInstallation(dataDir: string, installationId: string): StoredGitHubApp {
  const stored = readStoredGitHubApp(dataDir);
  if (!stored) throw new Error('no GitHub App is stored in the data directory');
  const updated = { ...stored, installationId };
  const path = dataPaths.githubApp(dataDir);
  renameSync(writeTemporary(path, updated), path);
  return updated;
}

/** Removes the stored App (the operator's DELETE /github-app): what was removed, or null when none was stored. */
export function removeStoredGitHubApp(dataDir: string): { appId: string | null; slug: string | null } | null {
  const path = dataPaths.githubApp(dataDir);
  if (!existsSync(path)) return null;
  const stored = readStoredGitHubApp(dataDir);
  rmSync(path, { force: true });
  return { appId: stored?.appId ?? null, slug: stored?.slug ?? null };
}
