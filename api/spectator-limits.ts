// Public mode's limits per spectator (docs/security.md, "Spectators"): each client has a bucket of
// requests that refills at a steady rate and a cap on its requests in progress (a stream counts
// until it ends). A client is its address (an IPv6 client by its /64), or, behind a proxy the
// operator trusts (SVC_TRUSTED_PROXIES), the address that proxy saw. The buckets live in this API
// process's memory: with several API replicas a client has each replica's limit (decision 0014).
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Context } from 'koa';
import { Errors } from './errors.ts';
import type { SpectatorLimitSettings } from '../platform/config.ts';

interface Bucket {
  tokens: number;
  /** When `tokens` was last worked out (ms, monotonic). */
  at: number;
  inFlight: number;
}

/** Clients remembered at most: past it, those whose bucket is full and idle are forgotten first. */
const MAX_CLIENTS = 50_000;
/**
 * Spectator requests in progress in this process, all clients together: whoever holds many
 * addresses (an IPv6 /48 is 65,536 clients) still cannot hold the API's streams.
 */
export const MAX_SPECTATORS_IN_FLIGHT = 256;

export class SpectatorLimits {
  readonly settings: SpectatorLimitSettings;
  readonly #buckets = new Map<string, Bucket>();
  readonly #trusted: BlockList | null;
  readonly #now: () => number;
  #inFlight = 0;

  constructor(settings: SpectatorLimitSettings, now: () => number = () => performance.now()) {
    this.settings = settings;
    this.#now = now;
    this.#trusted = trustedProxies(settings.trustedProxies);
  }

  /** How many clients are remembered now. */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Takes one request of the context's client, or throws 429 rate_limited with Retry-After. The
   * request holds one of the client's in-progress places until its response closes.
   */
  admit(ctx: Context): void {
    const client = this.clientOf(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'));
    const bucket = this.#bucket(client);
    const { ratePerSecond, maxInFlight } = this.settings;
    if (bucket.inFlight >= maxInFlight)
      throw Errors.rateLimited(`this client already has ${maxInFlight} requests in progress`, 1);
    if (this.#inFlight >= MAX_SPECTATORS_IN_FLIGHT)
      throw Errors.rateLimited(`svc already serves ${MAX_SPECTATORS_IN_FLIGHT} spectator requests`, 1);
    if (bucket.tokens < 1)
      throw Errors.rateLimited(
        `this client is past its ${ratePerSecond} requests per second`,
        Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)),
      );
    bucket.tokens -= 1;
    bucket.inFlight += 1;
    this.#inFlight += 1;
    ctx.res.once('close', () => {
      bucket.inFlight -= 1;
      this.#inFlight -= 1;
    });
  }

  /** The client a request counts against: its peer, or what a trusted proxy in front says the client was. */
  clientOf(remoteAddress: string, forwardedFor: string): string {
    let client = plainAddress(remoteAddress);
    if (this.#trusted && client) {
      const hops = forwardedFor.split(',');
      // From the proxy nearest svc outwards: the first address no trusted proxy holds is the client.
      for (let i = hops.length - 1; i >= 0 && this.#isTrusted(client); i--) {
        const hop = hopAddress(hops[i]!.trim());
        // What a trusted proxy was handed by its own peer but is no address: keep the last one known.
        if (!hop) break;
        client = hop;
      }
    }
    return isIPv6(client) ? prefix64(client) : client;
  }

  #isTrusted(address: string): boolean {
    return this.#trusted!.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  }

  #bucket(client: string): Bucket {
    const now = this.#now();
    const { burst, ratePerSecond } = this.settings;
    const known = this.#buckets.get(client);
    if (known) {
      known.tokens = Math.min(burst, known.tokens + ((now - known.at) / 1000) * ratePerSecond);
      known.at = now;
      return known;
    }
    if (this.#buckets.size >= MAX_CLIENTS) this.#forget(now);
    const bucket = { tokens: burst, at: now, inFlight: 0 };
    this.#buckets.set(client, bucket);
    return bucket;
  }

  /** Forgets clients whose bucket has refilled and who have nothing in progress: they lose nothing. */
  #forget(now: number): void {
    const { burst, ratePerSecond } = this.settings;
    for (const [client, bucket] of this.#buckets)
      if (bucket.inFlight === 0 && bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond >= burst)
        this.#buckets.delete(client);
    // Still full (a flood from many addresses): the oldest idle ones go, which at worst lets them start afresh.
    for (const [client, bucket] of this.#buckets) {
      if (this.#buckets.size < MAX_CLIENTS) break;
      if (bucket.inFlight === 0) this.#buckets.delete(client);
    }
  }
}

function trustedProxies(entries: string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const type = isIPv6(address) ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** An address as svc compares it: an IPv4-mapped IPv6 address is its IPv4 one; '' when it is none. */
function plainAddress(value: string): string {
  const address = value.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  return isIPv4(address) || isIPv6(address) ? address.toLowerCase() : '';
}

/** A proxy's X-Forwarded-For entry, with the port some proxies add (`1.2.3.4:5678`, `[2001:db8::1]:443`). */
function hopAddress(value: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) return plainAddress(bracketed[1]!);
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(value);
  return plainAddress(withPort ? withPort[1]! : value);
}

/** The /64 an IPv6 address is in: one client, as a home or a host usually holds a whole /64. */
function prefix64(address: string): string {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  // An embedded IPv4 address at the end takes two groups.
  const width = (parts: string[]) => parts.reduce((sum, part) => sum + (part.includes('.') ? 2 : 1), 0);
  const left = groups(head);
  const right = groups(tail);
  const all =
    tail === undefined ? left : [...left, ...Array<string>(8 - width(left) - width(right)).fill('0'), ...right];
  return `${all
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
