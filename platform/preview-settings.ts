// The operator's preview settings (SVC_PREVIEW_*), parsed once at start-up: how previews are
// addressed (path or subdomain mode, the proxy's port), where workers serve them, and when they
// are evicted. A project's `.svc/preview.yaml` says what its preview runs (core/preview.ts).
import { durationSeconds } from '../core/svc-config.schema.ts';

export const PREVIEW_MODES = ['path', 'subdomain'] as const;
export type PreviewMode = (typeof PREVIEW_MODES)[number];

export interface PreviewSettings {
  /** path: `/p/<runId>/` on the proxy's port; subdomain: `run-<id>.<host>` (SVC_PREVIEW_MODE). */
  mode: PreviewMode;
  /** The previews' parent domain in subdomain mode (SVC_PREVIEW_HOST). */
  host: string | null;
  /** The proxy's port, on the API's host (SVC_PREVIEW_PORT; the API's port + 1, or any free one if that is taken). */
  proxyPort: number;
  proxyPortExplicit: boolean;
  /** Where a worker serves its previews' ports (SVC_PREVIEW_BIND) and where the API reaches them. */
  bind: string;
  workerHost: string;
  /** The ports previews take on a worker (SVC_PREVIEW_PORT_RANGE, `first-last`). */
  firstPort: number;
  lastPort: number;
  /** Eviction: without a request for this long (SVC_PREVIEW_IDLE_TTL), at this age (SVC_PREVIEW_MAX_LIFETIME). */
  idleTtlMs: number;
  maxLifetimeMs: number;
  /** The most previews live at once; the least recently used goes first (SVC_PREVIEW_MAX_LIVE). */
  maxLive: number;
}

/** The longest an operator may keep a preview alive. */
export const MAX_PREVIEW_LIFETIME_MS = 7 * 24 * 3600 * 1000;

function durationMs(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const value = env[name] || fallback;
  if (!/^(\d+h)?(\d+m)?(\d+s)?$/.test(value) || value === '')
    throw new Error(`${name} must be a duration such as 30s, 30m or 8h, not "${value}"`);
  return durationSeconds(value) * 1000;
}

export function parsePreviewSettings(env: NodeJS.ProcessEnv, apiPort: number): PreviewSettings {
  const mode = (env.SVC_PREVIEW_MODE || 'path') as PreviewMode;
  if (!PREVIEW_MODES.includes(mode)) throw new Error(`SVC_PREVIEW_MODE must be path or subdomain, not "${mode}"`);
  const host = env.SVC_PREVIEW_HOST?.toLowerCase().replace(/^\.+|\.+$/g, '') || null;
  if (mode === 'subdomain' && !host)
    throw new Error('SVC_PREVIEW_MODE=subdomain needs SVC_PREVIEW_HOST: previews are served at run-<id>.<host>');
  const range = /^(\d{1,5})-(\d{1,5})$/.exec(env.SVC_PREVIEW_PORT_RANGE || '30000-31000');
  const [firstPort, lastPort] = range ? [Number(range[1]), Number(range[2])] : [0, 0];
  if (!range || firstPort < 1 || lastPort > 65535 || firstPort > lastPort)
    throw new Error(`SVC_PREVIEW_PORT_RANGE must be first-last within 1-65535, not "${env.SVC_PREVIEW_PORT_RANGE}"`);
  const proxyPort = env.SVC_PREVIEW_PORT ? Number(env.SVC_PREVIEW_PORT) : apiPort === 0 ? 0 : apiPort + 1;
  if (!Number.isInteger(proxyPort) || proxyPort < 0 || proxyPort > 65535)
    throw new Error(`SVC_PREVIEW_PORT must be a port, not "${env.SVC_PREVIEW_PORT}"`);
  const maxLive = Number(env.SVC_PREVIEW_MAX_LIVE || 20);
  if (!Number.isInteger(maxLive) || maxLive < 1)
    throw new Error(`SVC_PREVIEW_MAX_LIVE must be a positive integer, not "${env.SVC_PREVIEW_MAX_LIVE}"`);
  const bind = env.SVC_PREVIEW_BIND || '127.0.0.1';
  const maxLifetimeMs = durationMs(env, 'SVC_PREVIEW_MAX_LIFETIME', '8h');
  // A week at most: the supervisor's backstop timer (and the watch activity) must stay well in range.
  if (maxLifetimeMs > MAX_PREVIEW_LIFETIME_MS)
    throw new Error(`SVC_PREVIEW_MAX_LIFETIME must be at most 168h, not "${env.SVC_PREVIEW_MAX_LIFETIME}"`);
  return {
    mode,
    host,
    proxyPort,
    proxyPortExplicit: Boolean(env.SVC_PREVIEW_PORT),
    bind,
    workerHost: env.SVC_PREVIEW_WORKER_HOST || (bind === '0.0.0.0' ? '127.0.0.1' : bind),
    firstPort,
    lastPort,
    idleTtlMs: durationMs(env, 'SVC_PREVIEW_IDLE_TTL', '30m'),
    maxLifetimeMs,
    maxLive,
  };
}
