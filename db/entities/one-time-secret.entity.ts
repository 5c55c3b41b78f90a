import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

// The API's one-time secrets, shared by every API replica: the dashboard's sign-in code and the
// GitHub App registration window (the armed link, bound browsers, form states). Only a secret's
// SHA-256 is kept, never the secret. Written by the API alone (api/services/setup-codes.ts,
// api/services/github-app-registration.ts); a secret is spent by one conditional DELETE, so of two
// replicas asked at once exactly one wins.
export const OneTimeSecretEntity = defineEntity({
  name: 'OneTimeSecret',
  tableName: 'one_time_secrets',
  properties: {
    /**
     * Where the secret sits: `setup` and `github-app-arm` hold one at a time (a new one replaces
     * the last), `github-app-browser:<hash>` and `github-app-state:<hash>` one per secret.
     */
    slot: p.string().primary().length(96),
    /** The secret's SHA-256, hex. */
    secretHash: p.string().length(64),
    /** A state's browser (its secret's SHA-256): the state works only there. */
    boundTo: p.string().length(64).nullable(),
    /** Epoch milliseconds; at or past it the secret opens nothing. */
    expiresAt: p.bigint('number'),
  },
});

export type OneTimeSecret = InferEntity<typeof OneTimeSecretEntity>;
