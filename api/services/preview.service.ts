// Previews as the API serves them: where they live (path or subdomain mode), the login that hands a
// browser the run's preview cookie, and teardown through the run's workflow.
import { previewCookieName, previewPathPrefix, teardownAnswerFor, type TeardownAnswer } from '../../core/preview.ts';
import type { PreviewSettings } from '../../platform/preview-settings.ts';
import { Errors } from '../errors.ts';
import { PREVIEW_LOGIN_MS, type PreviewCookies } from '../preview/preview-cookie.ts';
import type { RunsService } from './runs.service.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

export interface PreviewServiceDeps {
  settings: PreviewSettings;
  cookies: PreviewCookies;
  runs: Pick<RunsService, 'get'>;
  temporal: Pick<TemporalGateway, 'previewTeardown'>;
  /** The proxy's port once it listens (SVC_PREVIEW_PORT may be 0: any). */
  proxyPort: () => number;
}

export class PreviewService {
  readonly #deps: PreviewServiceDeps;

  constructor(deps: PreviewServiceDeps) {
    this.#deps = deps;
  }

  config() {
    return { mode: this.#deps.settings.mode, host: this.#deps.settings.host };
  }

  /** Where a run's preview is, for a browser that reached the API at `hostname`. */
  previewUrl(runId: string, hostname: string, secure: boolean): URL {
    const { mode, host } = this.#deps.settings;
    const port = this.#deps.proxyPort();
    const scheme = secure ? 'https' : 'http';
    const standard = (secure && port === 443) || (!secure && port === 80);
    const authority = `${mode === 'subdomain' ? `run-${runId}.${host}` : hostname}${standard ? '' : `:${port}`}`;
    return new URL(`${scheme}://${authority}${mode === 'path' ? previewPathPrefix(runId) : '/'}`);
  }

  /** The run's preview URL (or the redirect inside it) and the cookie that opens it. */
  async login(runId: string, request: { redirect?: string; hostname: string; secure: boolean }) {
    const run = await this.#deps.runs.get(runId);
    if (!run.previewState)
      throw Errors.validation(
        `run ${runId} has no preview`,
        'a preview starts when a run of a project with .svc/preview.yaml succeeds and opens its PR',
      );
    const { mode, host } = this.#deps.settings;
    // The API sets the cookie for the previews' domain: a browser keeps it only if the API is in it.
    const apiHost = request.hostname.toLowerCase();
    if (mode === 'subdomain' && apiHost !== host && !apiHost.endsWith(`.${host}`))
      throw Errors.validation(
        `this API (${apiHost}) cannot set a cookie for ${host}`,
        'reach the API at SVC_PREVIEW_HOST or a name under it, or use path mode',
      );
    const base = this.previewUrl(runId, request.hostname, request.secure);
    let target = base;
    if (request.redirect !== undefined) {
      try {
        target = new URL(request.redirect, base);
      } catch {
        throw Errors.previewRedirectInvalid(runId);
      }
      const inside = this.#deps.settings.mode === 'path' ? target.pathname.startsWith(base.pathname) : true;
      if (target.origin !== base.origin || !inside) throw Errors.previewRedirectInvalid(runId);
    }
    const attributes = [
      mode === 'path' ? `Path=${previewPathPrefix(runId)}` : `Path=/; Domain=${host}`,
      `Max-Age=${PREVIEW_LOGIN_MS / 1000}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(request.secure ? ['Secure'] : []),
    ];
    const cookie = `${previewCookieName(mode, runId)}=${this.#deps.cookies.sign(runId)}; ${attributes.join('; ')}`;
    return { url: target.toString(), cookie };
  }

  /** Tears the run's preview down through its workflow; a run whose workflow ended answers from its row. */
  async teardown(runId: string, actor: string): Promise<TeardownAnswer> {
    const run = await this.#deps.runs.get(runId);
    const answer = run.previewState ? await this.#deps.temporal.previewTeardown(runId, actor) : undefined;
    return answer ?? teardownAnswerFor(run.previewState ?? null, run.previewPort ?? null);
  }
}
