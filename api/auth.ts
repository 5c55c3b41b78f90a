// Who is calling, and may they use this route. Every route declares its policy next to it.
// Callers are the operator (the operator token), a run (a per-run token, on that run's callback
// routes only), or nobody (anonymous routes).
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { mintRunToken, RUN_TOKEN_PATTERN } from '../core/run-token.ts';
import { Errors } from './errors.ts';
import type { SpectatorLimits } from './spectator-limits.ts';

export const AUTH_POLICIES = ['anonymous', 'readPublic', 'readOperator', 'dispatch', 'admin'] as const;
export type AuthPolicy = (typeof AUTH_POLICIES)[number];
export type Capability = Exclude<AuthPolicy, 'anonymous'>;

export interface Identity {
  kind: 'operator' | 'anonymous' | 'run';
  capabilities: Capability[];
  runId?: string;
}

export const OPERATOR: Identity = {
  kind: 'operator',
  capabilities: ['readPublic', 'readOperator', 'dispatch', 'admin'],
};
/** A credential-less caller in public mode: a spectator, who may read redacted public views. */
export const SPECTATOR: Identity = { kind: 'anonymous', capabilities: ['readPublic'] };

export interface AuthSettings {
  operatorToken: string;
  /** `svc serve --no-auth`: every caller is the operator (loopback only; enforced at start). */
  noAuth: boolean;
  /** A run token is valid only while its run is not terminal. */
  isRunActive(runId: string): Promise<boolean>;
  /** SVC_AUTH=public: callers without a credential are spectators (a bad credential is still 401). */
  publicMode?: boolean;
  /** Public mode's per-client limits on spectators (429 rate_limited past them). */
  spectatorLimits?: SpectatorLimits;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Bearer token from the Authorization header only: a token in a query string is never read. */
export function authenticate(
  ctx: Context,
  settings: Pick<AuthSettings, 'operatorToken' | 'noAuth' | 'publicMode'>,
): Identity {
  if (settings.noAuth) return OPERATOR;
  const header = ctx.get('Authorization');
  if (!header && settings.publicMode) return SPECTATOR;
  if (!header) throw Errors.unauthorized('missing bearer token', undefined, 'invalid_request');
  const match = /^bearer\s+(\S+)\s*$/i.exec(header);
  if (!match)
    throw Errors.unauthorized(
      'malformed Authorization header',
      'use the form: Authorization: Bearer <token>',
      'invalid_request',
    );
  const token = match[1]!;
  if (sameSecret(token, settings.operatorToken)) return OPERATOR;
  const run = RUN_TOKEN_PATTERN.exec(token);
  if (run && sameSecret(token, mintRunToken(settings.operatorToken, run[1]!)))
    return { kind: 'run', capabilities: ['readOperator', 'dispatch'], runId: run[1]! };
  throw Errors.unauthorized('invalid bearer token');
}

export interface RouteAuth {
  policy: AuthPolicy;
  /**
   * true: one of a run's own callback routes (inbox, finalize, salvage, git credential), for its
   * run's token; 'any': any live run token may call it (GET /whoami, to learn who it is).
   */
  runToken?: boolean | 'any';
}

export async function authorize(
  ctx: Context,
  route: RouteAuth,
  settings: AuthSettings,
  pathRunId: string | undefined,
): Promise<Identity | undefined> {
  if (route.policy === 'anonymous') return undefined;
  const identity = authenticate(ctx, settings);
  if (identity.kind === 'run') {
    if (!route.runToken) throw Errors.forbidden(route.policy, 'a run token reaches only its own run callback routes');
    if (route.runToken !== 'any' && pathRunId !== identity.runId)
      throw Errors.forbidden(route.policy, `this token belongs to run ${identity.runId}`);
    if (!(await settings.isRunActive(identity.runId!)))
      throw Errors.unauthorized('the run has ended: its token is no longer valid');
    // A route open to every live run token asks nothing more of it (GET /whoami).
    if (route.runToken === 'any') return identity;
  }
  // A spectator has no credential at all: asking for one is the helpful answer.
  if (identity === SPECTATOR && route.policy !== 'readPublic')
    throw Errors.unauthorized(
      `this route needs the operator token (public mode admits spectators to public reads only)`,
      undefined,
      'invalid_request',
    );
  if (!identity.capabilities.includes(route.policy as Capability)) throw Errors.forbidden(route.policy);
  if (identity === SPECTATOR) settings.spectatorLimits?.admit(ctx);
  return identity;
}
