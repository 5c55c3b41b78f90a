// The key that seals project secrets at rest (AES-256-GCM): SVC_SECRETS_KEY (base64 of 32 bytes),
// else a key made once in the data directory (0600). Every API replica and worker that shares a
// database must hold the same key: with an external database, give it by SVC_SECRETS_KEY. During a
// rotation SVC_SECRETS_KEY_PREVIOUS still opens what the previous key sealed, and start-up re-seals
// it with the new one. docs/guide/secrets.md, docs/decisions/0049-project-secrets.md.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigurationError } from './config-error.ts';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sealed form's version: `v1:<base64 of iv | tag | ciphertext>`. */
const SEALED_PREFIX = 'v1:';

/** What the seal of a value is bound to (its project and name): a sealed value moved to another row opens nothing. */
export type SealContext = string;

export class SecretsKey {
  /** A short public name of the key (the first 16 hex digits of its SHA-256): rows record which key sealed them. */
  readonly id: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`a secrets key is ${KEY_BYTES} bytes, not ${key.length}`);
    this.#key = key;
    this.id = createHash('sha256').update(key).digest('hex').slice(0, 16);
  }

  /** A fresh key. */
  static generate(): SecretsKey {
    return new SecretsKey(randomBytes(KEY_BYTES));
  }

  /** The key written as base64 (what SVC_SECRETS_KEY holds). */
  toBase64(): string {
    return this.#key.toString('base64');
  }

  seal(value: string, context: SealContext): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** The value, or an error when the sealed form was altered, moved, or sealed by another key. */
  open(sealed: string, context: SealContext): string {
    if (!sealed.startsWith(SEALED_PREFIX)) throw new Error('not a sealed secret');
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** The keys a process holds: the one it seals with, and the one being rotated away from. */
export interface SecretsKeys {
  current: SecretsKey;
  previous: SecretsKey | null;
  source: 'environment' | 'file';
  /** The key file, when the key is the data directory's. */
  path: string | null;
}

function parseKey(variable: string, value: string): SecretsKey {
  const bytes = Buffer.from(value.trim(), 'base64');
  if (!/^[A-Za-z0-9+/]{43}=?$/.test(value.trim()) || bytes.length !== KEY_BYTES)
    throw new ConfigurationError(
      `${variable} must be ${KEY_BYTES} bytes written as base64 (e.g. the output of \`openssl rand -base64 32\`)`,
    );
  return new SecretsKey(bytes);
}

/** The settings: SVC_SECRETS_KEY and SVC_SECRETS_KEY_PREVIOUS, checked (platform/config.ts reads them). */
export interface SecretsKeySettings {
  key: string | undefined;
  previous: string | undefined;
}

/** The settings, or a ConfigurationError naming the variable that is not a key. */
export function checkSecretsKeySettings(settings: SecretsKeySettings): SecretsKeySettings {
  if (settings.key) parseKey('SVC_SECRETS_KEY', settings.key);
  if (settings.previous) parseKey('SVC_SECRETS_KEY_PREVIOUS', settings.previous);
  return settings;
}

/**
 * SVC_SECRETS_KEY (and SVC_SECRETS_KEY_PREVIOUS), else the key file at `path`, made on first use
 * (an exclusive create: two processes at once agree). A bad value is a ConfigurationError.
 */
export function loadSecretsKeys(settings: SecretsKeySettings, path: string): SecretsKeys {
  const previous = settings.previous ? parseKey('SVC_SECRETS_KEY_PREVIOUS', settings.previous) : null;
  if (settings.key)
    return { current: parseKey('SVC_SECRETS_KEY', settings.key), previous, source: 'environment', path: null };
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, `${SecretsKey.generate().toBase64()}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const current = parseKey(path, readFileSync(path, 'utf8'));
  return { current, previous, source: 'file', path };
}
