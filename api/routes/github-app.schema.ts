// Schemas of the GitHub App routes: the registration pages' queries (/github-app/register,
// /callback, /installed; not strict: GitHub's redirects may add parameters of their own, which svc
// ignores) and the operator's JSON routes (GET/DELETE /github-app, POST /github-app/registration).
import { z } from 'zod';

export const registerQuery = z.object({
  name: z.string().max(200).optional().describe('The App name (default svc-forge-<6 chars>; at most 34 characters)'),
  org: z.string().max(200).optional().describe('The organization that will own the App (default: the user)'),
  arm: z
    .string()
    .max(200)
    .optional()
    .describe('The one-time code of the link POST /github-app/registration armed: it binds this browser'),
});

export const callbackQuery = z.object({
  code: z.string().max(200).optional().describe("GitHub's one-time manifest code"),
  state: z.string().max(200).optional().describe('The state the registration form carried'),
  confirmed: z.string().max(10).optional().describe("Set by svc's own confirmation form (a same-site request)"),
});

export const installedQuery = z.object({
  installation_id: z.string().max(200).optional().describe("GitHub's installation id (digits)"),
  setup_action: z.string().max(200).optional().describe('install or update'),
  confirmed: z.string().max(10).optional().describe("Set by svc's own confirmation form (a same-site request)"),
});

/** An HTML page (no scripts; no-store, no referrer, a CSP that loads nothing). */
export const htmlPage = z.string();

export const githubIdentityResponse = z.object({
  description: z.string().describe('The identity in a sentence, as the serve log and `svc doctor` say it'),
  mode: z
    .enum(['app', 'pat', 'anonymous'])
    .describe('What svc uses on GitHub now: an installed App, else the personal access token, else nothing'),
  app: z
    .object({
      source: z.enum(['env', 'data-dir']).describe('SVC_GITHUB_APP_* settings, or registered and stored by svc'),
      appId: z.string(),
      slug: z.string().nullable().describe('Known for an App svc registered'),
      installationId: z.string().nullable().describe('Null until the App is installed (then it acts)'),
    })
    .nullable()
    .describe('The App svc is registered as, installed or not; null when none'),
  registration: z.object({
    enabled: z.boolean().describe('Whether the registration pages are open (SVC_GITHUB_APP_REGISTRATION)'),
    credentialStore: z.enum(['page', 'data-dir']).describe('SVC_APP_CRED_STORE'),
  }),
});

export const githubAppRegistrationResponse = z.object({
  path: z.string().describe('The one-time registration link, /github-app/register?arm=…, on this API'),
  url: z.string().describe("The whole link, on the instance's public URL (SVC_PUBLIC_URL)"),
  expiresAt: z.string().describe('When the link stops working, unless opened first (ten minutes)'),
});

export const githubAppRemovedResponse = z.object({
  removed: z.object({
    appId: z.string().nullable().describe('Null when the stored file was not one svc could read'),
    slug: z.string().nullable(),
  }),
  identity: githubIdentityResponse.describe('What svc uses now'),
});
