// Routes of the operations surface: who the instance is, how it is doing, its Prometheus metrics,
// and the dashboard's one-time sign-in page.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Spectators } from '../presenters/spectator.ts';
import { Errors } from '../errors.ts';
import { defineRoute } from '../route.ts';
import type { OpsService } from '../services/ops.service.ts';
import type { SetupCodes } from '../services/setup-codes.ts';
import { instanceResponse, overviewQuery, overviewResponse, setupCodeResponse, setupQuery } from './ops.schema.ts';

export function opsRoutes(
  ops: OpsService,
  spectators: Spectators,
  setup: { codes: SetupCodes; token: string; publicUrl: string | null },
) {
  return [
    defineRoute({
      method: 'get',
      path: '/instance',
      auth: 'readPublic',
      summary: 'This instance: version, name, public URL, sandbox runtime, auth mode (operators: more)',
      tags: ['ops'],
      responses: { 200: { description: 'The instance', schema: instanceResponse } },
      handler: async ({ identity }) => {
        const { version, name, publicUrl, runtime, authMode, ...operatorOnly } = ops.instance();
        const shown = { version, name, publicUrl, runtime, authMode };
        return { status: 200, body: Spectators.is(identity) ? shown : { ...shown, ...operatorOnly } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/ops/overview',
      auth: 'readPublic',
      summary: "The window's runs, spend and delivery, and the services' health",
      tags: ['ops'],
      query: overviewQuery,
      responses: { 200: { description: 'The overview', schema: overviewResponse } },
      handler: async ({ query, identity }) => {
        if (!Spectators.is(identity)) return { status: 200, body: await ops.overview(query.window) };
        const overview = await ops.overview(query.window, await spectators.visibleProjects());
        const { costUsd: _usd, ...spend } = overview.spend;
        return { status: 200, body: { ...overview, spend } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      auth: 'readOperator',
      summary: "This process's Prometheus metrics (svc_* gauges and histograms, Node.js, Temporal SDK)",
      tags: ['ops'],
      responses: {
        200: { description: 'Prometheus text exposition', schema: z.string(), contentType: 'text/plain' },
      },
      handler: async () => {
        const { contentType, text } = await ops.metrics();
        return { status: 200, body: text, headers: { 'Content-Type': contentType } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/setup',
      auth: 'anonymous',
      changesState: true,
      // With no armed code (spent, expired, never armed) the answer is 404 not_found, as the envelope.
      summary: "The dashboard's one-time sign-in: a code printed by `svc serve` stores the token in this browser",
      tags: ['ops'],
      query: setupQuery,
      responses: {
        200: {
          description: 'Signs this browser in, then opens the dashboard',
          schema: z.string(),
          contentType: 'text/html',
        },
        400: { description: 'An unknown, spent or expired code', schema: z.string(), contentType: 'text/html' },
      },
      handler: async ({ query }) => {
        if (!(await setup.codes.armed()))
          throw Errors.notFound('setup code', 'run `svc login` for a fresh sign-in link');
        if (!query.code || !(await setup.codes.redeem(query.code)))
          return htmlPage(
            400,
            '<h1>This sign-in link is spent or wrong</h1><p>Run <code>svc login</code> for a fresh one.</p>',
          );
        const nonce = randomBytes(16).toString('base64');
        const script = `localStorage.setItem('svc.apiToken', ${JSON.stringify(setup.token)});location.replace('/');`;
        return htmlPage(200, `<p>Signing in…</p><script nonce="${nonce}">${script}</script>`, nonce);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/setup-codes',
      // The operator's token only (run tokens lack admin): the code it arms signs a browser in as the operator.
      auth: 'admin',
      summary: 'Arm a fresh one-time dashboard sign-in code (replacing any earlier one); what `svc login` prints',
      tags: ['ops'],
      responses: { 201: { description: 'The sign-in link, valid once within ten minutes', schema: setupCodeResponse } },
      handler: async () => {
        const { code, expiresAt } = await setup.codes.arm();
        const path = `/setup?code=${code}`;
        return {
          status: 201,
          body: {
            path,
            url: setup.publicUrl ? `${setup.publicUrl}${path}` : null,
            expiresAt: new Date(expiresAt).toISOString(),
          },
          headers: { 'Cache-Control': 'no-store' },
        };
      },
    }),
  ];
}

/** A small page that is never cached, sends no referrer, and runs only the script it carries. */
function htmlPage(status: number, body: string, nonce?: string) {
  const scripts = nonce ? `script-src 'nonce-${nonce}'; ` : '';
  return {
    status,
    body: `<!doctype html><html><head><meta charset="utf-8"><title>svc</title></head><body>${body}</body></html>`,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': `default-src 'none'; ${scripts}frame-ancestors 'none'`,
    },
  };
}
