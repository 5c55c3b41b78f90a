// The GitHub App routes. The registration pages are HTML (a browser coming back from GitHub carries
// no svc token), no scripts, never cached, no referrer, every value from a request or from GitHub
// escaped, and they serve only a browser the operator bound: POST /github-app/registration (the
// operator's token) arms a one-time link, and opening it sets an HttpOnly, SameSite=Strict cookie
// that the form, the callback and the installation all require. With the registration gate off,
// the pages and the arming answer 404 not_found (the JSON envelope). GET and DELETE /github-app
// tell the operator which identity svc uses and remove a stored App.
import type { Context } from 'koa';
import { Errors } from '../errors.ts';
import { defineRoute } from '../route.ts';
import { parseCookies } from '../preview/preview-cookie.ts';
import {
  AppKeyError,
  ConversionFailedError,
  GitHubAppFromEnvironmentError,
  GitHubUnreachableError,
  type GitHubAppService,
} from '../services/github-app.service.ts';
import { GitHubAppAlreadyStoredError, type StoredGitHubApp } from '../../platform/github-app.ts';
import { BROWSER_TTL_MS } from '../services/github-app-registration.ts';
import {
  callbackQuery,
  githubAppRegistrationResponse,
  githubAppRemovedResponse,
  githubIdentityResponse,
  htmlPage,
  installedQuery,
  registerQuery,
} from './github-app.schema.ts';

/** The bound browser's cookie: only the registration pages see it (Path), never a script (HttpOnly). */
const COOKIE = 'svc_github_app';

const html = (description: string) => ({ description, schema: htmlPage, contentType: 'text/html' });

export function githubAppRoutes(app: GitHubAppService) {
  const gate = () => {
    if (!app.enabled)
      throw Errors.notFound('GitHub App registration', 'set SVC_GITHUB_APP_REGISTRATION=on to register an App');
  };
  // Any of the name's values, among however many cookies: a page of the same host (a preview, on
  // another port: cookies are per host) can put a decoy of the name in front.
  const boundBrowser = async (ctx: Context): Promise<string | null> => {
    for (const [name, value] of parseCookies(ctx.get('Cookie')))
      if (name === COOKIE && (await app.isBound(value))) return value;
    return null;
  };
  // Secure whenever the browser reaches svc over HTTPS (directly, or as SVC_PUBLIC_URL says).
  const attributes = (ctx: Context) =>
    `Path=/github-app; HttpOnly; SameSite=Strict${ctx.secure || app.publicUrl?.startsWith('https:') ? '; Secure' : ''}`;
  const setCookie = (browser: string, ctx: Context) => ({
    'Set-Cookie': `${COOKIE}=${browser}; Max-Age=${BROWSER_TTL_MS / 1000}; ${attributes(ctx)}`,
  });
  const clearCookie = (ctx: Context) => ({ 'Set-Cookie': `${COOKIE}=; Max-Age=0; ${attributes(ctx)}` });
  return [
    defineRoute({
      method: 'get',
      path: '/github-app',
      auth: 'readOperator',
      summary: 'Which GitHub identity svc uses (an installed App, the PAT or none) and the App it is registered as',
      tags: ['github-app'],
      responses: { 200: { description: 'The identity', schema: githubIdentityResponse } },
      handler: async () => ({ status: 200, body: app.identity() }),
    }),
    defineRoute({
      method: 'post',
      path: '/github-app/registration',
      // The operator's token only: the link binds a browser that may then register the App svc acts as.
      auth: 'admin',
      summary:
        'Arm a one-time link that opens the App registration in one browser (what `svc github-app register` prints)',
      tags: ['github-app'],
      responses: {
        201: { description: 'The link, valid once within ten minutes', schema: githubAppRegistrationResponse },
      },
      handler: async () => {
        gate();
        if (app.publicUrl === null) throw Errors.publicUrlRequired();
        const { code, expiresAt } = await app.arm();
        const path = `/github-app/register?arm=${code}`;
        return {
          status: 201,
          body: {
            path,
            url: `${app.publicUrl}${path}`,
            expiresAt: new Date(expiresAt).toISOString(),
          },
          headers: { 'Cache-Control': 'no-store' },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/github-app',
      auth: 'admin',
      summary: 'Remove the App stored in the data directory: svc goes back to the PAT until an App is registered again',
      tags: ['github-app'],
      responses: { 200: { description: 'The App removed, and what svc uses now', schema: githubAppRemovedResponse } },
      handler: async () => {
        let removed: ReturnType<GitHubAppService['remove']>;
        try {
          removed = app.remove();
        } catch (error) {
          if (error instanceof GitHubAppFromEnvironmentError) throw Errors.githubAppFromEnvironment();
          throw error;
        }
        if (!removed) throw Errors.notFound('stored GitHub App', 'svc has no App in its data directory');
        return { status: 200, body: { removed, identity: app.identity() } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/github-app/register',
      auth: 'anonymous',
      summary: 'A form that registers svc as a GitHub App on GitHub (manifest flow); 404 when registration is off',
      tags: ['github-app'],
      query: registerQuery,
      responses: {
        200: html('The manifest form: it posts to GitHub, with a one-time state'),
        400: html('An invalid org or name'),
        403: html('A browser the operator did not bind (no armed link, or it is spent or expired): no form'),
        409: html(
          'An App is already stored in the data directory (a registration does not replace it), or svc has no ' +
            'public URL (SVC_PUBLIC_URL) for the manifest to name',
        ),
      },
      handler: async ({ query, ctx }) => {
        gate();
        let browser = await boundBrowser(ctx);
        let cookie: Record<string, string> = {};
        // A link is spent when opened, even by a browser already bound: left armed, whoever saw it
        // (shell history, a chat) could still bind a browser of their own.
        const bound = query.arm ? await app.bind(query.arm) : null;
        if (bound) {
          browser = bound.browser;
          cookie = setCookie(bound.browser, ctx);
        }
        if (!browser) return notBound();
        const registration = await app.register(query, browser);
        if (registration.kind === 'no_public_url') {
          const { message, hint } = Errors.publicUrlRequired();
          return page(
            409,
            'Cannot register this App',
            `<p>${escape(message)}: ${escape(hint!)}</p>`,
            undefined,
            cookie,
          );
        }
        if (registration.kind === 'invalid')
          return page(400, 'Cannot register this App', `<p>${escape(registration.message)}</p>`, undefined, cookie);
        if (registration.kind === 'already_stored') return alreadyStored(cookie);
        const owner = registration.org ? `the organization <b>${escape(registration.org)}</b>` : 'your account';
        const body = [
          `<p>GitHub will create the private App <b>${escape(registration.name)}</b>, owned by ${owner}, with the`,
          'repository permissions a run needs (contents: write, pull requests: write, metadata: read) and no',
          'webhook. Then install it on the repositories svc works on.</p>',
          `<form method="post" action="${escape(registration.action)}">`,
          `<input type="hidden" name="manifest" value="${escape(JSON.stringify(registration.manifest))}">`,
          '<button type="submit">Create the App on GitHub</button></form>',
          '<p>This form works once, within ten minutes.</p>',
        ].join('\n');
        return page(200, 'Register svc as a GitHub App', body, app.githubWebUrl, cookie);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/github-app/callback',
      auth: 'anonymous',
      summary: "GitHub's redirect after the App is created: the code becomes the App's credentials; 404 when off",
      tags: ['github-app'],
      query: callbackQuery,
      responses: {
        200: html("The App's credentials (or, with SVC_APP_CRED_STORE=data-dir, that they were stored)"),
        400: html('A missing code or state, or a state that is unknown, spent, expired or of another browser'),
        403: html('A browser the operator did not bind: nothing is converted or stored'),
        409: html('An App is already stored in the data directory'),
        502: html('GitHub did not convert the code'),
      },
      handler: async ({ query, ctx }) => {
        gate();
        if (!query.code || !query.state)
          return page(400, 'This link is incomplete', '<p>GitHub sends both a code and a state. Start again.</p>');
        const browser = await boundBrowser(ctx);
        if (!browser)
          return query.confirmed
            ? notBound()
            : confirm('/github-app/callback', { code: query.code, state: query.state });
        if (app.alreadyStored) return alreadyStored();
        if (!(await app.redeemState(query.state, browser)))
          return page(
            400,
            'This registration link is spent, expired or unknown',
            '<p>Each registration form works once, within ten minutes, in the browser that opened it. Run ' +
              '<code>svc github-app register</code> for a fresh link.</p>',
          );
        let created: StoredGitHubApp;
        try {
          created = await app.convert(query.code);
        } catch (error) {
          if (!(error instanceof ConversionFailedError)) throw error;
          return page(502, 'GitHub did not create the credentials', `<p>${escape(error.message)}.</p>`);
        }
        if (!app.storesCredentials) return credentialsPage(created);
        try {
          app.store(created);
        } catch (error) {
          if (error instanceof GitHubAppAlreadyStoredError) return alreadyStored();
          throw error;
        }
        const body = [
          `<p>svc stored the App <b>${escape(created.slug)}</b> (id ${escape(created.appId)}) in its data directory,`,
          'readable by svc alone. Its secrets are not shown. Now install it on the repositories svc works on:',
          `${installLink(created)}. GitHub then brings you back here and svc starts acting as the App.</p>`,
        ].join('\n');
        return page(200, 'GitHub App registered', body);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/github-app/installed',
      auth: 'anonymous',
      summary: "GitHub's redirect after an installation: a stored App starts acting; otherwise instructions",
      tags: ['github-app'],
      query: installedQuery,
      responses: {
        200: html('The App is active, or what to configure by hand'),
        403: html('A browser the operator did not bind: no installation is taken'),
        500: html("The stored App's private key cannot sign"),
        502: html('GitHub did not answer the installation check'),
      },
      handler: async ({ query, ctx }) => {
        gate();
        const browser = await boundBrowser(ctx);
        if (!browser) {
          if (query.confirmed) return notBound();
          const fields: Record<string, string> = { installation_id: query.installation_id ?? '' };
          if (query.setup_action) fields.setup_action = query.setup_action;
          return confirm('/github-app/installed', fields);
        }
        try {
          const installed = await app.install(query.installation_id);
          if (installed.kind === 'activated') {
            // Its App acts: the browser's binding has done its work.
            await app.release(browser);
            return page(
              200,
              'GitHub App active',
              `<p>svc now acts as its App, installed on <b>${escape(installed.account)}</b> (installation ` +
                `${escape(installed.installationId)}): every token it uses is for one repository, for an hour.</p>`,
              undefined,
              clearCookie(ctx),
            );
          }
          return page(200, 'GitHub App installation', instructions(installed.installationId, installed.reason));
        } catch (error) {
          if (error instanceof AppKeyError)
            return page(500, 'The App key cannot sign', "<p>Check the stored App's private key.</p>");
          if (error instanceof GitHubUnreachableError)
            return page(502, 'GitHub did not answer', '<p>Open this link again in a moment.</p>');
          throw error;
        }
      },
    }),
  ];
}

function instructions(installationId: string | null, reason: string): string {
  const setting = installationId
    ? `<pre>SVC_GITHUB_APP_INSTALLATION_ID=${escape(installationId)}</pre>`
    : '<p>The installation id is the number at the end of the installation page on GitHub.</p>';
  const why: Record<string, string> = {
    no_id: '<p>GitHub did not say which installation this is.</p>',
    no_app: '<p>svc has no App registered yet: set SVC_GITHUB_APP_ID and SVC_GITHUB_APP_PRIVATE_KEY, and</p>',
    env: '<p>svc takes its App from its environment: set</p>',
    not_this_app: '<p>GitHub does not know this installation as one of the App svc is registered as. Set</p>',
  };
  return `${why[reason] ?? ''}${setting}<p>in svc's environment and restart it.</p>`;
}

function installLink(created: StoredGitHubApp): string {
  const url = /^https?:\/\//.test(created.htmlUrl) ? `${created.htmlUrl}/installations/new` : null;
  return url ? `<a href="${escape(url)}">install ${escape(created.slug)}</a>` : 'install it from its GitHub page';
}

/** Page mode: the credentials, shown this once (GitHub never shows the key again). */
function credentialsPage(created: StoredGitHubApp) {
  const body = [
    `<p>GitHub created the App <b>${escape(created.slug)}</b>. This page is the only copy of its private key:`,
    'save it now, readable by svc alone, then configure svc and restart it:</p>',
    `<pre>SVC_GITHUB_APP_ID=${escape(created.appId)}\nSVC_GITHUB_APP_PRIVATE_KEY=/path/to/the-key.pem</pre>`,
    `<p>Then ${installLink(created)}; GitHub brings you back with the installation id to set.</p>`,
    `<h2>Private key</h2><pre>${escape(created.privateKey)}</pre>`,
    `<h2>OAuth client</h2><pre>client id: ${escape(created.clientId)}`,
    `client secret: ${escape(created.clientSecret)}</pre>`,
    created.webhookSecret ? `<h2>Webhook secret</h2><pre>${escape(created.webhookSecret)}</pre>` : '',
  ].join('\n');
  return page(200, 'GitHub App registered', body);
}

function alreadyStored(headers: Record<string, string> = {}) {
  return page(
    409,
    'A GitHub App is already stored',
    '<p>svc has an App stored in its data directory, and a registration never replaces it. To install it, open ' +
      'its page on GitHub; to register another, remove it first: <code>svc github-app remove</code>.</p>',
    undefined,
    headers,
  );
}

/** No state, no App, no installation for a browser the operator did not bind. */
function notBound() {
  return page(
    403,
    'This browser cannot register svc as a GitHub App',
    "<p>Only the operator registers svc's App: run <code>svc github-app register</code> (or use the " +
      "dashboard's Ops page) and open the link it gives, once, within ten minutes, in this browser.</p>",
  );
}

/**
 * GitHub's redirect is a cross-site navigation, so the browser withholds the SameSite=Strict
 * cookie: a form back to the same page, submitted from svc's own origin, brings it. It carries only
 * what GitHub sent, and changes nothing by itself.
 */
function confirm(action: string, fields: Record<string, string>) {
  const inputs = Object.entries({ ...fields, confirmed: '1' })
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('');
  return page(
    200,
    'Continue in this browser',
    `<p>GitHub sent you back to svc. Continue in the browser that started the registration.</p>` +
      `<form method="get" action="${escape(action)}">${inputs}<button type="submit">Continue</button></form>`,
    "'self'",
  );
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and double- or single-quoted attributes. */
function escape(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);
}

/** A page with no script, never cached, sending no referrer; only the register form may post, to GitHub. */
function page(status: number, title: string, body: string, formTarget?: string, headers: Record<string, string> = {}) {
  return {
    status,
    body:
      `<!doctype html><html><head><meta charset="utf-8"><title>svc: ${escape(title)}</title></head>` +
      `<body><h1>${escape(title)}</h1>\n${body}</body></html>`,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': [
        "default-src 'none'",
        `form-action ${formTarget ?? "'none'"}`,
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ].join('; '),
      ...headers,
    },
  };
}
