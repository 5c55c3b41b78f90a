// Where a webhook delivery may go: any public address; a private one (loopback, a private network,
// link-local) only when the operator names it in SVC_WEBHOOK_PRIVATE_TARGETS. Without that rule a
// webhook pointed at an internal service would turn its answers (a status, a refusal, a timeout) into
// a scan of the internal network. A delivery connects to the address decided here (no second lookup,
// so DNS rebinding cannot redirect it), follows no redirect and reads no body.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { egressRuleForUrl, type EgressRule } from '../core/egress-rules.ts';
import { decideEgress, type EgressDecision, type Resolver } from './network-destinations.ts';
import { http, https } from './node-http.ts';

/** Any public host on any port, after the operator's named private targets. */
const ANY_PUBLIC: EgressRule = { host: '*', ports: '*', source: 'operator' };

const REFUSALS: Record<string, string> = {
  non_public_address: 'resolves to a non-public address',
  link_local_address: 'resolves to a link-local address',
  unresolvable: 'does not resolve',
};

export class WebhookTargetError extends Error {}

/**
 * The decision for a webhook URL: the address to connect to, or why not (one sentence, with the way
 * out); `unresolvable` says the name does not resolve now (a registration accepts it, a delivery fails).
 */
export async function decideWebhookTarget(
  url: string,
  privateTargets: readonly EgressRule[],
  resolve?: Resolver,
): Promise<{ address: string } | { refusal: string; unresolvable: boolean }> {
  const target = egressRuleForUrl(url, 'operator');
  const host = target.host;
  const port = (target.ports as number[])[0]!;
  const decision: EgressDecision = await decideEgress([...privateTargets, ANY_PUBLIC], host, port, resolve);
  if (decision.allowed) return { address: decision.address };
  const why = REFUSALS[decision.reason] ?? 'is not allowed';
  const named = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return {
    unresolvable: decision.reason === 'unresolvable',
    refusal:
      decision.reason === 'unresolvable'
        ? `${named} ${why}`
        : `${named} ${why}: list it in SVC_WEBHOOK_PRIVATE_TARGETS to deliver there`,
  };
}

/**
 * POSTs `body` to `url` at the decided `address` and answers the status; the answer's body is not
 * read. Rejects on a refused target (WebhookTargetError), a connection failure or the timeout.
 */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  { privateTargets, timeoutMs }: { privateTargets: readonly EgressRule[]; timeoutMs: number },
): Promise<number> {
  const decided = await decideWebhookTarget(url, privateTargets);
  if ('refusal' in decided) throw new WebhookTargetError(decided.refusal);
  const target = new URL(url);
  const family = isIP(decided.address);
  const client = target.protocol === 'https:' ? https() : http;
  return await new Promise<number>((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
        agent: false,
        // The checked address, whatever a resolver would answer now.
        lookup: (_host, options, callback) => {
          if ((options as { all?: boolean }).all) callback(null, [{ address: decided.address, family }]);
          else (callback as (error: null, address: string, family: number) => void)(null, decided.address, family);
        },
      },
      (response: IncomingMessage) => {
        response.destroy();
        resolve(response.statusCode ?? 0);
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.once('close', () => clearTimeout(deadline));
    request.once('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.once('error', reject);
    request.end(body);
  });
}
