// A run's preview, as svc plans and reports it: what a project's `.svc/preview.yaml` asks to run,
// resolved into the plan frozen on the run at dispatch (core/run-input.ts), and the vocabulary of
// its ends. Pure, and free of zod: workflows use it.
import type { PreviewState } from './run-states.ts';

/** The preview a run starts after it opened its PR (docs/previews.md), with the defaults filled in. */
export interface PreviewPlan {
  type: 'server' | 'static';
  command: string;
  setup: string | null;
  /** The port the preview listens on inside the run's sandbox. */
  port: number;
  readinessPath: string;
  setupTimeoutMs: number;
  /** Any HTTP answer within this long, then a 2xx/3xx on the readiness path within readinessTimeoutMs. */
  connectTimeoutMs: number;
  readinessTimeoutMs: number;
  /** The project's own eviction limits; the operator's apply when null. */
  idleTtlMs: number | null;
  maxLifetimeMs: number | null;
}

/** Why a live preview ended. */
export const PREVIEW_END_REASONS = ['teardown', 'evicted_lru', 'idle', 'max_lifetime', 'pr_closed', 'exited'] as const;
export type PreviewEndReason = (typeof PREVIEW_END_REASONS)[number];

/** Who tears a preview down to keep the live ones under SVC_PREVIEW_MAX_LIVE. */
export const LRU_ACTOR = 'svc:lru';

/** POST /runs/{id}/preview/teardown's answers (docs/previews.md). */
export const TEARDOWN_STATUSES = ['torn-down', 'already-torn-down', 'already-failed', 'never-launched'] as const;
export type TeardownStatus = (typeof TEARDOWN_STATUSES)[number];

export interface TeardownAnswer {
  status: TeardownStatus;
  tornDown: boolean;
  previousState: PreviewState | null;
  port: number | null;
}

/** The answer for a preview that is not (or no longer) running: what its state says. */
export function teardownAnswerFor(state: PreviewState | null, port: number | null): TeardownAnswer {
  const status: TeardownStatus =
    state === null ? 'never-launched' : state === 'failed' ? 'already-failed' : 'already-torn-down';
  return { status, tornDown: false, previousState: state, port };
}

/** The path prefix of a run's preview in path mode. */
export const previewPathPrefix = (runId: string) => `/p/${runId}/`;

/** The cookie that lets a browser into a run's preview: one per run in path mode, one per host in subdomain mode. */
export const previewCookieName = (mode: 'path' | 'subdomain', runId: string) =>
  mode === 'path' ? `svc_preview_${runId}` : 'svc_preview';
