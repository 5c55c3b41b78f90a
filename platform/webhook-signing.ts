// Webhook signatures. A webhook's secret is derived from the operator token and the webhook's id
// (HMAC-SHA256), never stored: the API shows it when the webhook is registered (and to an operator
// who asks again), the worker derives it to sign. Rotating the operator token rotates every secret.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header names a delivery carries. */
export const WEBHOOK_HEADERS = {
  event: 'x-svc-event',
  delivery: 'x-svc-delivery',
  timestamp: 'x-svc-timestamp',
  signature: 'x-svc-signature',
} as const;

/** The webhook's signing secret (`whsec_` + 64 hex characters). */
export function webhookSecret(operatorToken: string, webhookId: string): string {
  return `whsec_${createHmac('sha256', operatorToken).update(`svc-webhook:${webhookId}`).digest('hex')}`;
}

/** `sha256=<hex>`: HMAC-SHA256 with the secret over `<timestamp>.<body>` (the timestamp in seconds). */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver does: recompute and compare in constant time (and reject old timestamps itself). */
export function verifyWebhook(secret: string, timestamp: number, body: string, signature: string): boolean {
  const expected = Buffer.from(signWebhook(secret, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
