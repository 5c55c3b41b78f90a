// Reading a salvage envelope as it arrives: the bundle's base64 (up to the route's limit, tens of
// MiB) is decoded straight into a file, never held in memory; the other members are small and
// parsed as JSON. The envelope is a flat object: strings, numbers, null, and an array of strings.
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'koa';
import { assertJsonBody, containsNul } from '../middleware/json-body.ts';
import { Errors } from '../errors.ts';

const BUNDLE_FIELD = 'bundleBase64';
/** Any member but the bundle: a note, a ref. More than this is not an envelope svc wrote. */
const MAX_MEMBER_BYTES = 256 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type State = 'start' | 'key' | 'colon' | 'value' | 'after';

/** Decodes base64 as it comes, in whole groups of four characters, into a file. */
class Base64ToFile {
  readonly #out: WriteStream;
  #pending = '';
  #failure: Error | null = null;
  #characters = 0;
  bytes = 0;

  /** No base64 character arrived: `""`, which the envelope's schema refuses. */
  get empty(): boolean {
    return this.#characters === 0;
  }

  constructor(path: string) {
    this.#out = createWriteStream(path, { mode: 0o600 });
    // A write still in flight when the request is refused fails on the destroyed stream: keep the
    // error here (the request already has its answer) instead of letting it escape the process.
    this.#out.on('error', (error) => (this.#failure ??= error));
  }

  async push(text: string): Promise<void> {
    if (!/^[A-Za-z0-9+/=]*$/.test(text))
      throw Errors.validation('invalid request body', 'field "bundleBase64": base64');
    this.#characters += text.length;
    this.#pending += text;
    const whole = this.#pending.length - (this.#pending.length % 4);
    if (whole === 0) return;
    const chunk = Buffer.from(this.#pending.slice(0, whole), 'base64');
    this.#pending = this.#pending.slice(whole);
    this.bytes += chunk.length;
    if (this.#failure) throw this.#failure;
    if (!this.#out.write(chunk))
      await new Promise<void>((resolve) => {
        this.#out.once('drain', resolve);
        this.#out.once('close', resolve);
      });
  }

  destroy(): void {
    this.#out.destroy();
  }

  async close(): Promise<void> {
    if (this.#pending) {
      const chunk = Buffer.from(this.#pending, 'base64');
      this.bytes += chunk.length;
      this.#out.write(chunk);
    }
    await new Promise<void>((resolve, reject) =>
      this.#out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  }
}

/**
 * Parses the envelope from the request stream. The bundle, when there is one, is in `bundlePath`
 * (and `bundleBytes` long); the returned object has `bundleBase64: null` in its place.
 */
export async function readSalvageEnvelope(
  source: AsyncIterable<Buffer>,
  bundlePath: string,
  limit: number,
): Promise<{ envelope: Record<string, unknown>; bundleBytes: number }> {
  const envelope: Record<string, unknown> = {};
  let state: State = 'start';
  let key = '';
  let member: number[] = [];
  let inString = false;
  let escaped = false;
  let depth = 0;
  let bundle: Base64ToFile | null = null;
  let bundleBytes = 0;
  let size = 0;
  const bad = (what: string) => Errors.validation('request body is not a salvage envelope', what);
  const finishValue = async () => {
    if (bundle) {
      if ((bundle as Base64ToFile).empty)
        throw Errors.validation('invalid request body', 'field "bundleBase64": must not be empty (null for none)');
      await bundle.close();
      bundleBytes = bundle.bytes;
      envelope[key] = null;
      bundle = null;
    } else {
      try {
        envelope[key] = JSON.parse(Buffer.from(member).toString('utf8'));
      } catch {
        throw bad(`member "${key}" is not JSON`);
      }
    }
    member = [];
    state = 'after';
  };
  try {
    return await parse();
  } catch (error) {
    (bundle as Base64ToFile | null)?.destroy();
    throw error;
  }

  async function parse(): Promise<{ envelope: Record<string, unknown>; bundleBytes: number }> {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > limit) throw Errors.payloadTooLarge(limit);
      let streamed = '';
      for (const byte of chunk) {
        if (state === 'value' && bundle) {
          // Inside the bundle's string: base64 characters (and a JSON-escaped slash) until the quote.
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            await bundle.push(streamed);
            streamed = '';
            inString = false;
            await finishValue();
          } else streamed += String.fromCharCode(byte);
          continue;
        }
        const blank = byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
        if ((state === 'value' || state === 'key') && member.length === 0 && !inString) {
          if (blank) continue;
          if (state === 'key' && byte === 0x7d && Object.keys(envelope).length === 0) return { envelope, bundleBytes };
        }
        if (state === 'value' || state === 'key') {
          member.push(byte);
          if (member.length > MAX_MEMBER_BYTES) throw bad('a member is too long');
          if (inString) {
            if (escaped) escaped = false;
            else if (byte === BACKSLASH) escaped = true;
            else if (byte === QUOTE) {
              inString = false;
              if (state === 'key') {
                key = JSON.parse(Buffer.from(member).toString('utf8')) as string;
                member = [];
                state = 'colon';
              } else if (depth === 0) await finishValue();
            }
            continue;
          }
          if (byte === QUOTE) {
            inString = true;
            if (state === 'value' && depth === 0 && member.length === 1 && key === BUNDLE_FIELD) {
              bundle = new Base64ToFile(bundlePath);
              member = [];
            }
            continue;
          }
          if (state === 'key') throw bad('a member name must be a string');
          if (byte === 0x5b) depth++;
          else if (byte === 0x5d) {
            depth--;
            if (depth === 0) await finishValue();
          } else if (depth === 0 && (byte === 0x2c || byte === 0x7d)) {
            member.pop();
            await finishValue();
            state = byte === 0x7d ? 'start' : 'key';
            if (byte === 0x7d) return { envelope, bundleBytes };
          }
          continue;
        }
        if (blank) continue;
        if (state === 'start' && byte === 0x7b) state = 'key';
        else if (state === 'colon' && byte === 0x3a) state = 'value';
        else if (state === 'after' && byte === 0x2c) state = 'key';
        else if (state === 'after' && byte === 0x7d) return { envelope, bundleBytes };
        else throw bad(`unexpected "${String.fromCharCode(byte)}"`);
      }
      if (bundle && streamed) await (bundle as Base64ToFile).push(streamed);
    }
    throw bad('the body ends before the envelope does');
  }
}

/**
 * The salvage route's body reader: JSON only, the bundle spooled into `spoolDir` while it arrives.
 * Leaves the spooled file's path (or null) in `ctx.state.salvageBundle` for the handler.
 */
export function salvageBodyReader(spoolDir: () => string) {
  return async (ctx: Context, limit: number): Promise<unknown> => {
    assertJsonBody(ctx, true);
    const dir = spoolDir();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `incoming-${randomUUID()}.bundle`);
    try {
      const { envelope, bundleBytes } = await readSalvageEnvelope(ctx.req, path, limit);
      if (containsNul(envelope))
        throw Errors.validation(
          'request body contains a NUL character (\\u0000)',
          'remove it: no svc field accepts it',
        );
      ctx.state.salvageBundle = bundleBytes > 0 ? path : null;
      if (bundleBytes === 0) rmSync(path, { force: true });
      return envelope;
    } catch (error) {
      rmSync(path, { force: true });
      throw error;
    }
  };
}
