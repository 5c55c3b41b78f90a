// Who is calling, and may they use this route. Every route declares one policy next to it.
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { Errors } from './errors.ts';

export const AUTH_POLICIES = ['anonymous', 'readPublic', 'readOperator', 'dispatch', 'admin'] as const;
export type AuthPolicy = (typeof AUTH_POLICIES)[number];
export type Capability = Exclude<AuthPolicy, 'anonymous'>;

export interface Identity {
  kind: 'operator' | 'anonymous';
  capabilities: Capability[];
}

export const OPERATOR: Identity = { kind: 'operator', capabilities: ['readPublic', 'readOperator', 'dispatch', 'admin'] };

export interface AuthSettings {
  operatorToken: string;
  /** `svc serve --no-auth`: every caller is the operator (loopback only; enforced at start). */
  noAuth: boolean;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Bearer token from the Authorization header only: a token in a query string is never read. */
export function authenticate(ctx: Context, settings: AuthSettings): Identity {
  if (settings.noAuth) return OPERATOR;
  const header = ctx.get('Authorization');
  if (!header) throw Errors.unauthorized('missing bearer token', undefined, 'invalid_request');
  const match = /^bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw Errors.unauthorized('malformed Authorization header', 'use the form: Authorization: Bearer <token>', 'invalid_request');
  if (sameSecret(match[1]!, settings.operatorToken)) return OPERATOR;
  throw Errors.unauthorized('invalid bearer token');
}

export function authorize(ctx: Context, policy: AuthPolicy, settings: AuthSettings): Identity | undefined {
  if (policy === 'anonymous') return undefined;
  const identity = authenticate(ctx, settings);
  if (!identity.capabilities.includes(policy)) throw Errors.forbidden(policy);
  return identity;
}
