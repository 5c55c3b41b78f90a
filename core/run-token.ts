// Per-run tokens: `svc1.<runId>.<hex HMAC-SHA256(operator token, "svc1.<runId>")>`. Stateless (the
// server recomputes them), bound to one run, and void once the operator token rotates.
import { createHmac } from 'node:crypto';

export const RUN_TOKEN_PATTERN = /^svc1\.(run_[0-9a-z]{12})\.([0-9a-f]{64})$/;

export function mintRunToken(operatorToken: string, runId: string): string {
  return `svc1.${runId}.${createHmac('sha256', operatorToken).update(`svc1.${runId}`).digest('hex')}`;
}
