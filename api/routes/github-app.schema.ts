// Query schemas of the GitHub App registration pages (/github-app/register, /callback, /installed).
// Not strict: GitHub's redirects may add parameters of their own, which svc ignores.
import { z } from 'zod';

export const registerQuery = z.object({
  name: z.string().max(200).optional().describe('The App name (default svc-forge-<6 chars>; at most 34 characters)'),
  org: z.string().max(200).optional().describe('The organization that will own the App (default: the user)'),
});

export const callbackQuery = z.object({
  code: z.string().max(200).optional().describe("GitHub's one-time manifest code"),
  state: z.string().max(200).optional().describe('The state the registration form carried'),
});

export const installedQuery = z.object({
  installation_id: z.string().max(200).optional().describe("GitHub's installation id (digits)"),
  setup_action: z.string().max(200).optional().describe('install or update'),
});

/** An HTML page (no scripts; no-store, no referrer, a CSP that loads nothing). */
export const htmlPage = z.string();
