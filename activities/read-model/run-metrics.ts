// What a run's projection tells the worker's metrics: each fact observed once, on the projection
// that first shows it (a retried projection observes nothing: projectRunRow answers undefined).
import { isTerminalRunState } from '../../core/run-states.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { secondsBetween, svcMetrics } from '../../platform/metrics.ts';
import type { ProjectedBefore } from './run-projection.ts';

export function observeRunProjection(before: ProjectedBefore, after: RunSnapshot): void {
  const observe = (histogram: { observe(value: number): void }, seconds: number | null) => {
    if (seconds !== null) histogram.observe(seconds);
  };
  if (after.startedAt && (before === null || before.state === 'queued') && after.state !== 'queued')
    observe(svcMetrics.queueWaitSeconds, secondsBetween(after.createdAt, after.startedAt));
  if (isTerminalRunState(after.state) && (before === null || !isTerminalRunState(before.state))) {
    const seconds = secondsBetween(after.startedAt ?? after.createdAt, after.endedAt);
    if (seconds !== null) svcMetrics.runDurationSeconds.observe({ state: after.state }, seconds);
    if (after.state === 'failed') svcMetrics.runFailures.inc({ reason: after.failureReason ?? 'unknown' });
  }
  if (after.prUrl && !before?.prUrl)
    observe(svcMetrics.timeToPrSeconds, secondsBetween(after.createdAt, after.endedAt ?? new Date().toISOString()));
  if (after.prState === 'merged' && before?.prState !== 'merged')
    observe(svcMetrics.prMergeSeconds, secondsBetween(after.endedAt, after.prMergedAt));
}

/** What newly appended events of a run tell the metrics (called only when the append added some). */
export function observeRunEvents(events: readonly { kind: string; payload?: unknown }[]): void {
  for (const event of events) {
    const durationMs = (event.payload as { durationMs?: unknown } | null | undefined)?.durationMs;
    if (event.kind === 'finalize.result' && typeof durationMs === 'number' && durationMs >= 0)
      svcMetrics.finalizeSeconds.observe(durationMs / 1000);
  }
}
