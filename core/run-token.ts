// Per-run tokens: `svc1.<runId>.<hex HMAC-SHA256(operator token, "svc1.<runId>")>`. Stateless (the
// server recomputes them), bound to one run, and void once the operator token rotates.
import { createHmac } from 'node:crypto';
import { idPattern } from './id-shape.ts';

export const RUN_TOKEN_PATTERN = new RegExp(`^svc1\\.(${idPattern('run')})\\.([0-9a-f]{64})$`);

export function mintRunToken(operatorToken: string, runId: string): string {
  return `svc1.${runId}.${createHmac('sha256', operatorToken).update(`svc1.${runId}`).digest('hex')}`;
}
