// Deciding one outgoing connection: a sandbox's egress through svc's proxy, or a webhook delivery.
// The destination must be admitted by a rule, and every address it resolves to must be public (and
// not the host's own), unless an exact operator or built-in entry names it (a loopback model server,
// an internal mirror, an internal webhook receiver). Link-local addresses (cloud metadata) open only
// to an entry that is that very IP. The caller connects to the address checked here, never to a name
// resolved again, so DNS rebinding cannot swap a public answer for a private one in between.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { isExactRule, matchEgressRule, type EgressRule } from '../core/egress-rules.ts';

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
// (IPv4-mapped addresses are unmapped before the check: Node matches IPv4 against a ::ffff:0:0/96 rule.)
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}
// The host's own addresses: a public one still leads to every service listening on all interfaces.
for (const entries of Object.values(networkInterfaces())) {
  for (const entry of entries ?? [])
    NON_PUBLIC.addAddress(entry.address.replace(/%.*$/, ''), entry.family === 'IPv6' ? 'ipv6' : 'ipv4');
}
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it carries. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isPublicAddress(address: string): boolean {
  const { address: plain, family } = unmapped(address);
  return !NON_PUBLIC.check(plain, family);
}

export type EgressRefusal = 'not_allowlisted' | 'non_public_address' | 'link_local_address' | 'unresolvable';

/** Whether the rule that admitted a name also admits this address of it. */
export function addressAllowed(rule: EgressRule, address: string): EgressRefusal | null {
  if (isPublicAddress(address)) return null;
  const { address: plain, family } = unmapped(address);
  if (LINK_LOCAL.check(plain, family))
    return rule.host === plain.toLowerCase() && rule.source !== 'project' ? null : 'link_local_address';
  return isExactRule(rule) && rule.source !== 'project' ? null : 'non_public_address';
}

export type EgressDecision =
  { allowed: true; rule: EgressRule; address: string } | { allowed: false; reason: EgressRefusal; detail?: string };

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** Decides host:port and, when allowed, answers the one address to connect to. */
export async function decideEgress(
  rules: readonly EgressRule[],
  host: string,
  port: number,
  resolve: Resolver = systemResolver,
): Promise<EgressDecision> {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  const rule = matchEgressRule(rules, name, port);
  if (!rule) return { allowed: false, reason: 'not_allowlisted' };
  let addresses: string[];
  try {
    addresses = isIP(name) ? [name] : await resolve(name);
  } catch (error) {
    return { allowed: false, reason: 'unresolvable', detail: (error as Error).message };
  }
  if (addresses.length === 0) return { allowed: false, reason: 'unresolvable' };
  // Every answer must pass: a name with one private answer among public ones is refused whole.
  for (const address of addresses) {
    const refusal = addressAllowed(rule, address);
    if (refusal) return { allowed: false, reason: refusal, detail: address };
  }
  return { allowed: true, rule, address: addresses[0]! };
}
