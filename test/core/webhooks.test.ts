// The webhook rules (core/webhooks.ts) and signatures (platform/webhook-signing.ts), directly.
import test from 'ava';
import { deliveryId, parseConfiguredWebhooks, retryDelayMs, wants, type Webhook } from '../../core/webhooks.ts';
import { signWebhook, verifyWebhook, webhookSecret } from '../../platform/webhook-signing.ts';

const webhook = (hooks: Webhook['hooks']): Webhook => ({
  id: 'whk_a',
  url: 'https://hooks.example/a',
  hooks,
  description: null,
  source: 'api',
  createdAt: 1000,
});

test('a webhook takes its hooks, from its registration on', (t) => {
  t.true(wants(webhook(null), { hook: 'run_started', ts: 1000 }));
  t.false(wants(webhook(null), { hook: 'run_started', ts: 999 }), 'not what came before it');
  t.true(wants(webhook(['post_reap']), { hook: 'post_reap', ts: 2000 }));
  t.false(wants(webhook(['post_reap']), { hook: 'run_started', ts: 2000 }));
  t.is(deliveryId('whk_a', 42), 'whd-whk_a-42');
});

test('retries double from the base, at most an hour apart', (t) => {
  const retry = { baseMs: 10_000, maxAttempts: 10 };
  t.deepEqual(
    [1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, retry)),
    [10_000, 20_000, 40_000, 80_000],
  );
  t.is(retryDelayMs(20, retry), 60 * 60_000);
});

test('SVC_WEBHOOKS: a JSON list, each entry checked, ids prefixed', (t) => {
  t.deepEqual(parseConfiguredWebhooks(undefined, 5), []);
  t.like(parseConfiguredWebhooks('[{"id":"ops","url":"https://ops.example/h","hooks":["post_reap"]}]', 5), [
    { id: 'cfg-ops', url: 'https://ops.example/h', hooks: ['post_reap'], source: 'config', createdAt: 5 },
  ]);
  t.throws(() => parseConfiguredWebhooks('{"id":"ops"}', 5), { message: /JSON list/ });
  t.throws(() => parseConfiguredWebhooks('[{"id":"Ops!","url":"https://x"}]', 5), { message: /\[0\]: id/ });
  t.throws(() => parseConfiguredWebhooks('[{"id":"ops","url":"ftp://x"}]', 5), { message: /url/ });
  t.throws(() => parseConfiguredWebhooks('[{"id":"ops","url":"https://x","hooks":["nope"]}]', 5), {
    message: /unknown hooks: nope/,
  });
});

test('a signature is HMAC-SHA256 over timestamp and body, with a per-webhook secret', (t) => {
  const secret = webhookSecret('operator-token', 'whk_a');
  t.not(secret, webhookSecret('operator-token', 'whk_b'));
  t.not(secret, webhookSecret('other-token', 'whk_a'));
  const signature = signWebhook(secret, 1700000000, '{"a":1}');
  t.regex(signature, /^sha256=[0-9a-f]{64}$/);
  t.true(verifyWebhook(secret, 1700000000, '{"a":1}', signature));
  t.false(verifyWebhook(secret, 1700000001, '{"a":1}', signature), 'another timestamp');
  t.false(verifyWebhook(secret, 1700000000, '{"a":2}', signature), 'another body');
  t.false(verifyWebhook(secret, 1700000000, '{"a":1}', 'sha256=00'), 'a short signature');
});
