// Outgoing webhooks cannot be turned into a scan of svc's network: a receiver on a private address
// (loopback, a private network, link-local) is refused at registration and at delivery unless the
// operator names it in SVC_WEBHOOK_PRIVATE_TARGETS, and a refused delivery never connects, so an
// open port and a closed one answer alike.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEgressList } from '../../core/egress-rules.ts';
import { decideWebhookTarget, postWebhook, WebhookTargetError } from '../../platform/webhook-targets.ts';
import { loadConfig } from '../../platform/config.ts';
import { startTestStack } from '../support/stack.ts';

/** A receiver that counts the connections it was given. */
async function receiver(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((_request, response) => response.writeHead(204).end());
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

const PRIVATE_URLS = [
  'http://127.0.0.1:6379/',
  'http://localhost:5432/',
  'http://10.0.0.5/hook',
  'http://192.168.1.1:8080/',
  'http://[::1]:9000/',
  'http://[::ffff:127.0.0.1]:22/',
  'http://169.254.169.254/latest/meta-data/',
  'http://0.0.0.0:80/',
];

test('a registration naming a private receiver is refused, registering nothing; a named one is accepted', async (t) => {
  const open = await receiver();
  t.teardown(() => open.server.close());
  const svc = await startTestStack({ env: { SVC_WEBHOOK_PRIVATE_TARGETS: `127.0.0.1:${open.port}` } });
  t.teardown(() => svc.stop());
  for (const url of PRIVATE_URLS) {
    const refused = await svc.request('POST', '/webhooks', { body: { url } });
    t.is(refused.status, 400, `${url}: ${refused.text}`);
    t.is(refused.body.error.code, 'webhook_target_refused', url);
    t.regex(refused.body.error.hint, /SVC_WEBHOOK_PRIVATE_TARGETS/);
  }
  t.deepEqual((await svc.request('GET', '/webhooks')).body.webhooks, []);
  // Another port of the named host is still refused: the entry names host and port.
  const otherPort = await svc.request('POST', '/webhooks', { body: { url: `http://127.0.0.1:${open.port + 1}/` } });
  t.is(otherPort.status, 400);
  const named = await svc.request('POST', '/webhooks', { body: { url: `http://127.0.0.1:${open.port}/hook` } });
  t.is(named.status, 201, named.text);
  t.is(open.connections(), 0, 'a registration connects to nothing');
});

test('a refused delivery never connects: an open and a closed internal port answer alike', async (t) => {
  const open = await receiver();
  t.teardown(() => open.server.close());
  const closed = await receiver();
  await new Promise((resolve) => closed.server.close(resolve));
  const settings = { privateTargets: [], timeoutMs: 2000 };
  const errors: string[] = [];
  for (const port of [open.port, closed.port]) {
    const error = await t.throwsAsync(postWebhook(`http://127.0.0.1:${port}/`, {}, '{}', settings), {
      instanceOf: WebhookTargetError,
    });
    errors.push(error!.message.replace(String(port), 'PORT'));
  }
  t.is(errors[0], errors[1], 'no difference between an open port and a closed one');
  t.regex(errors[0]!, /non-public address/);
  t.is(open.connections(), 0);

  // Named by the operator, the same receiver gets the delivery.
  const named = { privateTargets: parseEgressList(`127.0.0.1:${open.port}`, 'operator'), timeoutMs: 2000 };
  t.is(await postWebhook(`http://127.0.0.1:${open.port}/`, { 'content-type': 'application/json' }, '{}', named), 204);
  t.is(open.connections(), 1);
});

test('a public name that resolves to a private or link-local address is refused, whatever it is called', async (t) => {
  const resolver = (table: Record<string, string[]>) => async (host: string) => {
    if (!table[host]) throw new Error(`ENOTFOUND ${host}`);
    return table[host]!;
  };
  const dns = resolver({
    'hooks.example.com': ['93.184.216.34'],
    'rebind.example.com': ['93.184.216.34', '10.0.0.7'],
    'metadata.example.com': ['169.254.169.254'],
    'internal.corp': ['10.1.2.3'],
  });
  t.deepEqual(await decideWebhookTarget('https://hooks.example.com/svc', [], dns), { address: '93.184.216.34' });
  t.like(await decideWebhookTarget('https://rebind.example.com/svc', [], dns), { unresolvable: false });
  t.like(await decideWebhookTarget('http://metadata.example.com/', [], dns), { unresolvable: false });
  // A name the operator lists may be private, but link-local only as that very IP.
  const listed = parseEgressList('internal.corp:443, metadata.example.com:80', 'operator');
  t.deepEqual(await decideWebhookTarget('https://internal.corp/svc', listed, dns), { address: '10.1.2.3' });
  t.regex(
    ((await decideWebhookTarget('http://metadata.example.com/', listed, dns)) as { refusal: string }).refusal,
    /link-local/,
  );
  t.like(await decideWebhookTarget('https://nowhere.invalid/', [], dns), { unresolvable: true });
});

test('SVC_WEBHOOK_PRIVATE_TARGETS names each receiver: a wildcard, which would open nothing, is refused', (t) => {
  for (const entry of ['*.corp:443', 'hooks.internal:*'])
    t.throws(() => loadConfig({ SVC_WEBHOOK_PRIVATE_TARGETS: entry }), { message: /wildcard; name each receiver/ });
  t.like(loadConfig({ SVC_WEBHOOK_PRIVATE_TARGETS: 'hooks.internal:8443' }).webhooks.privateTargets, [
    { host: 'hooks.internal', ports: [8443] },
  ]);
});
