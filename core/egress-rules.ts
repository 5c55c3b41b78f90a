// The sandbox egress allowlist: which destinations an agent may reach through svc's proxy. Pure:
// parsing entries ("host", "host:port", "*.suffix:443", "[::1]:8080", "host:*") and matching a
// destination against them. Address classification (private, loopback…) lives with the proxy.

/** Who put an entry on the list: what it may open depends on it (docs/security.md). */
export type EgressSource = 'builtin' | 'operator' | 'project';

export interface EgressRule {
  /** A lowercase host name, an IP literal (IPv6 without brackets), `*.suffix`, or `*` (any public host). */
  host: string;
  /** The ports allowed; `*` for any. */
  ports: number[] | '*';
  source: EgressSource;
}

/** Ports of an entry that names none: the web's two. */
export const DEFAULT_EGRESS_PORTS = [80, 443];

export class EgressEntryError extends Error {}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

function parsePort(text: string, entry: string): number | '*' {
  if (text === '*') return '*';
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535)
    throw new EgressEntryError(`"${entry}": the port must be 1-65535 or *`);
  return port;
}

/** Parses one allowlist entry; throws EgressEntryError naming the entry when it is not one. */
export function parseEgressEntry(raw: string, source: EgressSource): EgressRule {
  const entry = raw.trim().toLowerCase();
  if (!entry) throw new EgressEntryError('an empty egress entry');
  let host: string;
  let portText: string | undefined;
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0) throw new EgressEntryError(`"${raw}": an IPv6 address needs its closing bracket`);
    host = entry.slice(1, close);
    const rest = entry.slice(close + 1);
    if (rest && !rest.startsWith(':')) throw new EgressEntryError(`"${raw}": expected :port after the address`);
    portText = rest ? rest.slice(1) : undefined;
    if (!host.includes(':')) throw new EgressEntryError(`"${raw}": brackets are for IPv6 addresses`);
  } else {
    const parts = entry.split(':');
    if (parts.length > 2) throw new EgressEntryError(`"${raw}": write an IPv6 address in brackets, [::1]:8080`);
    host = parts[0]!;
    portText = parts[1];
  }
  const port = portText === undefined ? undefined : parsePort(portText, raw);
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (host !== '*' && !host.includes(':') && !IPV4.test(host) && !HOST_NAME.test(name))
    throw new EgressEntryError(`"${raw}": not a host name, an IP address or *.domain`);
  return {
    host,
    ports: port === undefined ? (host === '*' ? '*' : DEFAULT_EGRESS_PORTS) : port === '*' ? '*' : [port],
    source,
  };
}

/** A comma- or whitespace-separated list of entries (SVC_SANDBOX_EGRESS). */
export function parseEgressList(text: string | undefined, source: EgressSource): EgressRule[] {
  return (text ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => parseEgressEntry(entry, source));
}

/** The rule for a URL's origin (a model endpoint, the forge API): its host and its one port. */
export function egressRuleForUrl(url: string, source: EgressSource): EgressRule {
  const parsed = new URL(url);
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return { host: parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase(), ports: [port], source };
}

/**
 * The rules without what an earlier one already admits for the same host: an operator entry that
 * repeats a model endpoint is one destination, and opens one forwarded port in the sandbox, not two.
 * The earlier rule (the more trusted source, as a run's list is ordered) is the one kept.
 */
export function mergeEgressRules(rules: readonly EgressRule[]): EgressRule[] {
  const merged: EgressRule[] = [];
  for (const rule of rules) {
    const earlier = merged.filter((kept) => kept.host === rule.host);
    if (earlier.some((kept) => kept.ports === '*')) continue;
    const taken = new Set(earlier.flatMap((kept) => kept.ports as number[]));
    if (rule.ports === '*') merged.push(rule);
    else if (rule.ports.some((port) => !taken.has(port)))
      merged.push({ ...rule, ports: rule.ports.filter((port) => !taken.has(port)) });
  }
  return merged;
}

function hostMatches(rule: EgressRule, host: string): boolean {
  if (rule.host === '*') return true;
  if (rule.host.startsWith('*.')) return host.endsWith(rule.host.slice(1)) && host.length > rule.host.length - 1;
  return rule.host === host;
}

/** The first rule that admits host:port (host already lowercased, IPv6 without brackets). */
export function matchEgressRule(rules: readonly EgressRule[], host: string, port: number): EgressRule | undefined {
  const wanted = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  return rules.find((rule) => hostMatches(rule, wanted) && (rule.ports === '*' || rule.ports.includes(port)));
}

/** Whether a rule names exactly one host (no wildcard): only those may open non-public addresses. */
export function isExactRule(rule: EgressRule): boolean {
  return !rule.host.includes('*');
}

/** One line per rule, for events and logs: `api.anthropic.com:443 (builtin)`. */
export function describeEgressRule(rule: EgressRule): string {
  const host = rule.host.includes(':') ? `[${rule.host}]` : rule.host;
  return `${host}:${rule.ports === '*' ? '*' : rule.ports.join('|')} (${rule.source})`;
}
