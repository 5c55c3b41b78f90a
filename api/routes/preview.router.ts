// Routes of previews: where they live, the login that opens one run's preview in a browser (a
// cookie, never a token in a URL), and teardown. The previews themselves are served by the proxy
// (api/preview/preview-proxy.ts) on its own port.
import { defineRoute } from '../route.ts';
import type { PreviewService } from '../services/preview.service.ts';
import { runIdParams } from './runs.schema.ts';
import {
  previewConfigResponse,
  previewLoginBody,
  previewLoginResponse,
  previewTeardownBody,
  previewTeardownResponse,
} from './preview.schema.ts';

export function previewRoutes(previews: PreviewService) {
  return [
    defineRoute({
      method: 'get',
      path: '/preview/config',
      auth: 'readOperator',
      summary: 'Where previews are served: path mode (/p/<runId>/ on the preview port) or subdomain mode',
      tags: ['preview'],
      responses: { 200: { description: 'The preview addressing', schema: previewConfigResponse } },
      handler: async () => ({ status: 200, body: previews.config() }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/preview/login',
      auth: 'dispatch',
      summary: "Opens the run's preview in this browser: its URL, and a signed HttpOnly cookie for it",
      tags: ['runs', 'preview'],
      params: runIdParams,
      body: previewLoginBody,
      responses: {
        200: { description: 'The preview URL (Set-Cookie carries the login)', schema: previewLoginResponse },
      },
      handler: async ({ params, body, ctx }) => {
        const { url, cookie } = await previews.login(params.id, {
          redirect: body.redirect,
          hostname: ctx.hostname || '127.0.0.1',
          secure: ctx.secure,
        });
        return { status: 200, body: { url }, headers: { 'Set-Cookie': cookie, 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/preview/teardown',
      auth: 'dispatch',
      summary: "Stops the run's preview now and frees its port",
      tags: ['runs', 'preview'],
      params: runIdParams,
      body: previewTeardownBody,
      responses: { 200: { description: 'How the teardown went', schema: previewTeardownResponse } },
      handler: async ({ params, body }) => ({
        status: 200,
        body: await previews.teardown(params.id, body.actor ?? 'manual'),
      }),
    }),
  ];
}
