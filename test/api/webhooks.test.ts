// Outgoing webhooks: registered through the API or SVC_WEBHOOKS, each lifecycle event
// POSTed signed (HMAC-SHA256 over timestamp and body), retried with backoff by a delivery workflow
// across a kill -9 of the worker, every attempt visible; bad input changes nothing.
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { verifyWebhook, WEBHOOK_HEADERS } from '../../platform/webhook-signing.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import { waitForRunState } from '../support/stack.ts';
import { replaceWorker, startApiOnlyStack } from '../support/worker-kill.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A receiver that answers 500 to the first `failures` run_started deliveries on /flaky, then 200. */
async function startReceiver(failures: number) {
  const received: Received[] = [];
  let failed = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const flaky = request.url === '/flaky' && request.headers[WEBHOOK_HEADERS.event] === 'run_started';
      const answered = flaky && failed < failures ? (failed++, 500) : 200;
      received.push({ path: request.url!, headers: request.headers, body, answered });
      response.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('webhooks: signed deliveries, retried with backoff across a kill -9, every attempt visible', async (t) => {
  const receiver = await startReceiver(2);
  t.teardown(() => receiver.close());
  const configured = [{ id: 'ops', url: `${receiver.url}/ops`, hooks: ['post_reap'] }];
  const { environment, api } = await startApiOnlyStack(t, {
    SVC_WEBHOOKS: JSON.stringify(configured),
    // The receiver listens on loopback: a private destination the operator names.
    SVC_WEBHOOK_PRIVATE_TARGETS: new URL(receiver.url).host,
    SVC_WEBHOOK_POLL_MS: '200',
    SVC_WEBHOOK_SETTLE_MS: '200',
    SVC_WEBHOOK_RETRY_BASE_MS: '3000',
  });
  const firstWorker = spawnSvc(['worker'], environment.env);
  t.teardown(() => firstWorker.child.kill('SIGKILL'));
  await waitForOutput(firstWorker, /worker: polling/);

  // Bad input is a clear envelope and registers nothing.
  for (const body of [{ url: 'ftp://example.test/x' }, { url: `${receiver.url}/x`, hooks: ['run_exploded'] }, {}]) {
    const refused = await api.request('POST', '/webhooks', { body });
    t.is(refused.status, 400, refused.text);
    t.is(refused.body.error.code, 'validation_error');
  }
  t.is((await api.request('DELETE', '/webhooks/whk_nosuchthing')).status, 404);

  // An Idempotency-Key: a registration retried (after a 503, say) finds the same webhook, never a second.
  const registration = {
    url: `${receiver.url}/flaky`,
    hooks: ['run_started', 'post_reap'],
    description: 'the flaky one',
  };
  const register = (body: object) =>
    api.request('POST', '/webhooks', { body, headers: { 'idempotency-key': 'flaky-hook-1' } });
  const created = await register(registration);
  t.is(created.status, 201, created.text);
  const { webhook, secret } = created.body;
  const repeated = await register(registration);
  t.is(repeated.status, 201, repeated.text);
  t.deepEqual(repeated.body, created.body, 'the same webhook and secret');
  const reused = await register({ ...registration, url: `${receiver.url}/other` });
  t.is(reused.status, 409);
  t.is(reused.body.error.code, 'idempotency_key_reused');
  // A key whose webhook was removed never brings it (or its secret) back.
  const removable = { url: `${receiver.url}/gone` };
  const once = await api.request('POST', '/webhooks', { body: removable, headers: { 'idempotency-key': 'gone-1' } });
  t.is(once.status, 201, once.text);
  t.is((await api.request('DELETE', `/webhooks/${once.body.webhook.id}`)).status, 200);
  const revived = await api.request('POST', '/webhooks', { body: removable, headers: { 'idempotency-key': 'gone-1' } });
  t.is(revived.status, 409, revived.text);
  t.is(revived.body.error.code, 'idempotency_key_reused');
  t.regex(secret, /^whsec_[0-9a-f]{64}$/);
  t.like(webhook, { url: `${receiver.url}/flaky`, hooks: ['run_started', 'post_reap'], source: 'api' });
  t.is((await api.request('GET', `/webhooks/${webhook.id}/secret`)).body.secret, secret);
  const listed = await waitFor(async () => {
    const { webhooks } = (await api.request('GET', '/webhooks')).body;
    return webhooks.length === 2 ? webhooks : null;
  }, 'both webhooks listed');
  t.deepEqual(listed.map((entry: any) => entry.id).sort(), ['cfg-ops', webhook.id].sort());
  const refusedRemoval = await api.request('DELETE', '/webhooks/cfg-ops');
  t.is(refusedRemoval.status, 409, 'a configured webhook goes with SVC_WEBHOOKS');

  // The run waits for the test's word, so that it ends (post_reap) only once the worker is replaced.
  const runId = (
    await api.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'until [ -e go ]; do sleep 0.2; done; echo hooked' },
    })
  ).body.run.id;
  // The first attempt of run_started failed; the worker dies while the delivery waits to retry.
  const startedDelivery = `whd-${webhook.id}-`;
  await waitFor(async () => {
    const { deliveries } = (await api.request('GET', `/webhooks/${webhook.id}/deliveries`)).body;
    return deliveries.some((delivery: any) => delivery.hook === 'run_started' && delivery.state === 'retrying');
  }, 'a failed first attempt');
  await replaceWorker(t, firstWorker, environment.env);
  writeFileSync(join(environment.dataDir, 'workspaces', runId, 'go'), '');
  t.is((await waitForRunState(api, runId, undefined, 90_000)).state, 'succeeded');

  const deliveries = await waitFor(
    async () => {
      const { deliveries: rows } = (await api.request('GET', `/webhooks/${webhook.id}/deliveries`)).body;
      return rows.length === 2 && rows.every((row: any) => row.state === 'delivered') ? rows : null;
    },
    'both deliveries delivered',
    90_000,
  );
  const started = deliveries.find((row: any) => row.hook === 'run_started');
  t.like(started, { runId, attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
  t.true(started.id.startsWith(startedDelivery));
  t.like(
    deliveries.find((row: any) => row.hook === 'post_reap'),
    { runId, attempts: 1, state: 'delivered' },
  );

  // What the receiver saw: two refusals, then each delivery once, signed; the configured one too.
  const flaky = receiver.received.filter((entry) => entry.path === '/flaky');
  const answers = (hook: string) =>
    flaky.filter((entry) => entry.headers[WEBHOOK_HEADERS.event] === hook).map((entry) => entry.answered);
  t.deepEqual(answers('run_started'), [500, 500, 200]);
  t.deepEqual(answers('post_reap'), [200]);
  for (const entry of flaky) {
    const timestamp = Number(entry.headers[WEBHOOK_HEADERS.timestamp]);
    const signature = String(entry.headers[WEBHOOK_HEADERS.signature]);
    t.true(verifyWebhook(secret, timestamp, entry.body, signature), 'signed with the webhook secret');
    t.false(verifyWebhook(`${secret}0`, timestamp, entry.body, signature), 'and with nothing else');
    t.like(JSON.parse(entry.body), { webhookId: webhook.id, run: { id: runId } });
  }
  const ops = receiver.received.filter((entry) => entry.path === '/ops');
  t.is(ops.length, 1);
  t.like(JSON.parse(ops[0]!.body), { hook: 'post_reap', state: 'succeeded', run: { id: runId, state: 'succeeded' } });
  const opsSecret = (await api.request('GET', '/webhooks/cfg-ops/secret')).body.secret;
  t.true(
    verifyWebhook(
      opsSecret,
      Number(ops[0]!.headers[WEBHOOK_HEADERS.timestamp]),
      ops[0]!.body,
      String(ops[0]!.headers[WEBHOOK_HEADERS.signature]),
    ),
  );
  const counts = (await api.request('GET', '/webhooks')).body.webhooks.find((entry: any) => entry.id === webhook.id);
  t.like(counts.deliveries, { delivered: 2, retrying: 0, failed: 0 });

  // Removed: listed no more, and a later run's events are not offered to it.
  t.is((await api.request('DELETE', `/webhooks/${webhook.id}`)).status, 200);
  t.is((await api.request('GET', `/webhooks/${webhook.id}/deliveries`)).status, 404);
  const later = (await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo later' } })).body.run.id;
  await waitForRunState(api, later, undefined, 90_000);
  await waitFor(
    async () => receiver.received.filter((entry) => entry.path === '/ops').length === 2,
    'the later run at /ops',
  );
  t.is(receiver.received.filter((entry) => entry.path === '/flaky').length, flaky.length);
});
