// A run's preview, after the run succeeded with an open PR: starting → live | failed, then
// torn-down. Its eviction limits (idle, lifetime) are workflow timers, so a restart of anything
// loses none; a teardown asked through the API, the PR's merge or close, or the preview's own end
// cut them short. Whatever happens, its sandbox is stopped before the phase ends.
import { ActivityFailure, CancellationScope, condition, isCancellation } from '@temporalio/workflow';
import type { RunEventInput } from '../activities/index.ts';
import {
  LRU_ACTOR,
  teardownAnswerFor,
  type PreviewEndReason,
  type PreviewPlan,
  type TeardownAnswer,
} from '../core/preview.ts';
import { projectSandbox, type ProjectSandboxSettings, type RunSnapshot } from '../core/run-model.ts';
import { previewIo, previewWatch } from './activity-proxies.ts';
import { systemEvent, type Publish } from './run/events.ts';

/** What the API tells a live preview: someone used it; tear it down. */
export interface PreviewChannel {
  lastHitAt: number | null;
  teardown: { actor: string } | null;
  /** Set once the preview is down (or never came up): what a teardown asked then answers. */
  answer: TeardownAnswer | null;
}

/** How long a teardown waits to answer with the preview down (the API gives Temporal calls 5 s). */
const TEARDOWN_ANSWER_MS = 3000;

/**
 * A teardown asked of a preview that is starting or live: answered once it is down, or after a few
 * seconds as accepted (a starting preview is torn down as soon as it is up; the flag is durable).
 */
export async function tearDownPreview(
  run: RunSnapshot,
  channel: PreviewChannel,
  request: { actor: string },
): Promise<TeardownAnswer> {
  const { previewState, previewPort } = run;
  if (previewState !== 'starting' && previewState !== 'live') return teardownAnswerFor(previewState, previewPort);
  channel.teardown ??= request;
  if (await condition(() => channel.answer !== null, TEARDOWN_ANSWER_MS)) return channel.answer!;
  return { status: 'torn-down', tornDown: true, previousState: previewState, port: previewPort };
}

const iso = (ms: number) => new Date(ms).toISOString();

export async function runPreview(
  run: RunSnapshot,
  plan: PreviewPlan,
  sandbox: ProjectSandboxSettings,
  channel: PreviewChannel,
  publish: Publish,
): Promise<void> {
  // A preview's events are once per run: each kind is its own key.
  const event = (kind: RunEventInput['kind'], payload: Record<string, unknown>) => systemEvent(kind, kind, payload);
  const fail = async (message: string) => {
    Object.assign(run, { previewState: 'failed', previewFailureMessage: message.slice(0, 2000) });
    channel.answer = { status: 'already-failed', tornDown: false, previousState: 'failed', port: run.previewPort };
    await publish([event('preview.failed', { message: run.previewFailureMessage, port: run.previewPort })]);
  };

  run.previewState = 'starting';
  await publish([event('preview.starting', { port: plan.port, command: plan.command.slice(0, 500) })]);
  try {
    const { evicted } = await previewIo.makeRoomForPreview({ runId: run.id });
    if (evicted.length) await publish([event('preview.made_room', { evicted })]);
    const started = await previewIo.startPreview({
      runId: run.id,
      plan,
      workspacePath: run.workspacePath!,
      // The agent's image and pod settings: the project's toolchain is there.
      ...projectSandbox(sandbox),
    });
    if (!started.ok) return await fail(started.message);
    Object.assign(run, { previewPort: started.port, previewHost: started.host ?? null });
    const ready = await previewIo.awaitPreviewReady({ runId: run.id, plan, host: started.host, port: started.port });
    if (!ready.ok) return await fail(ready.message ?? 'the preview did not become ready');
    const liveAt = Date.now();
    Object.assign(run, { previewState: 'live', previewStartedAt: iso(liveAt) });
    await publish([event('preview.live', { port: started.port })]);

    const { reason, message } = await untilEvicted(run, channel, liveAt, started, publish);
    if (reason === 'exited') return await fail(message ?? 'the preview ended');
    // Not live in the read model before its port is freed: the proxy stops sending browsers to it.
    run.previewState = 'torn-down';
    channel.answer = { status: 'torn-down', tornDown: true, previousState: 'live', port: run.previewPort };
    await publish([
      event('preview.torn_down', {
        reason,
        actor: channel.teardown?.actor ?? null,
        port: run.previewPort,
      }),
    ]);
  } catch (error) {
    // An activity out of retries fails the preview, never the run (already ended) or its PR watch.
    if (!(error instanceof ActivityFailure)) throw error;
    await fail(error.cause?.message ?? error.message);
  } finally {
    await CancellationScope.nonCancellable(() => previewIo.stopPreview({ runId: run.id })).catch((error: unknown) => {
      if (!(error instanceof ActivityFailure)) throw error;
    });
  }
}

/** Waits while the preview lives: until a teardown, the PR's end, its idle or lifetime limit, or its own end. */
async function untilEvicted(
  run: RunSnapshot,
  channel: PreviewChannel,
  liveAt: number,
  limits: { idleTtlMs: number; maxLifetimeMs: number },
  publish: Publish,
): Promise<{ reason: PreviewEndReason; message?: string }> {
  let exited: string | null = null;
  const watching = new CancellationScope();
  const watch = watching
    .run(() => previewWatch.watchPreview({ runId: run.id }))
    .then(
      (ended) => void (exited = ended.message),
      (error: unknown) => {
        // Cancelled when the preview is evicted; a watch that failed for good leaves the timers to decide.
        if (!isCancellation(error) && !(error instanceof ActivityFailure)) throw error;
      },
    );
  let reason: PreviewEndReason | null = null;
  while (reason === null) {
    const lastUse = Math.max(liveAt, channel.lastHitAt ?? 0);
    const endOfLife = liveAt + limits.maxLifetimeMs;
    const hitBefore = channel.lastHitAt;
    const wait = Math.min(lastUse + limits.idleTtlMs, endOfLife) - Date.now();
    if (wait > 0)
      await condition(
        () => channel.teardown !== null || exited !== null || run.prState !== 'open' || channel.lastHitAt !== hitBefore,
        wait,
      );
    // A hit that landed before this loop first looked (a worker restarted as the preview went
    // live) differs from what the read model shows, not from what the loop saw at its start.
    const unshown = channel.lastHitAt !== null && iso(channel.lastHitAt) !== run.previewLastHitAt;
    if ((channel.lastHitAt !== hitBefore || unshown) && channel.lastHitAt !== null) {
      // The proxy says so at most every 30 s: the read model shows when the preview was last used.
      run.previewLastHitAt = iso(channel.lastHitAt);
      await publish([]);
    }
    if (channel.teardown) reason = channel.teardown.actor === LRU_ACTOR ? 'evicted_lru' : 'teardown';
    else if (exited !== null) reason = 'exited';
    else if (run.prState !== 'open') reason = 'pr_closed';
    else if (Date.now() >= endOfLife) reason = 'max_lifetime';
    else if (Date.now() >= Math.max(liveAt, channel.lastHitAt ?? 0) + limits.idleTtlMs) reason = 'idle';
  }
  watching.cancel();
  await watch;
  return { reason, ...(exited !== null ? { message: exited } : {}) };
}
