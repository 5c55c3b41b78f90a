// One run: its state, cost and tokens as they grow, the live event tail, the change it made and its
// PR, and the operator's controls (steer, cancel, continue, replicate).
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { useQuery } from '../api/cache.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import { identity } from '../api/identity.ts';
import { pollTick } from '../api/lifecycle.ts';
import type { CancelRunResult, RunDetail, RunEvent } from '../api/types.ts';
import { EventTail, useRunEvents } from '../components/event-tail.tsx';
import { SteerBox } from '../components/steer-box.tsx';
import { RunDiffCard } from '../components/run-diff.tsx';
import { PrLoopCard, usePrLoopTick } from '../components/pr-loop.tsx';
import { PausedNotice } from '../components/pause-control.tsx';
import { OpenPreview, PreviewFact, usePreviewFollow } from '../components/preview-control.tsx';
import { ProjectLink } from '../components/project-link.tsx';
import { ErrorBox, Facts, Loading, PageHeader, StateBadge } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { count, money, span, when, httpUrl } from '../format.ts';

interface LiveUsage {
  costUsd: number | null;
  tokensInput: number | null;
  tokensOutput: number | null;
  tokensCacheRead: number | null;
}

/** The newest cumulative usage the runtime reported, if any (the run row catches up at the end). */
function latestUsage(events: RunEvent[]): LiveUsage | null {
  for (let index = events.length - 1; index >= 0; index--)
    if (events[index]!.kind === 'usage') return events[index]!.payload as LiveUsage;
  return null;
}

/** How many pushes the run made: the diff card reads the diff again after each. */
const pushes = (events: RunEvent[]) => events.filter((event) => event.kind === 'branch_pushed').length;

export function RunPage() {
  const { params } = useRoute();
  const id = params.id!;
  useTitle(`Run ${id}`);
  const detail = useQuery<RunDetail>(`/runs/${encodeURIComponent(id)}`);
  const run = detail.data?.run;
  const active = run ? run.state === 'queued' || run.state === 'running' : false;
  const spectator = identity.value.kind === 'spectator';
  // Spectators hold no streams (the server never follows for them): they re-read on each poll.
  // A run that ended still answers its open PR (rounds, merges): its log is re-read now and then.
  const prTick = usePrLoopTick(!active && run?.prState === 'open');
  const tail = useRunEvents(id, run ? active && !spectator : null, (spectator ? pollTick.value : 0) + prTick);
  const now = useNow(active);
  usePreviewFollow(run, detail.reload);
  const operator = identity.value.kind === 'operator';
  const [cancelError, setCancelError] = useState<ApiError>();
  const [cancelling, setCancelling] = useState(false);

  if (detail.error) return <ErrorBox error={detail.error} title={`Run ${id}`} />;
  if (!run) return <Loading lines={10} />;
  const usage = latestUsage(tail.events);
  // The run's own branch is named by its push; a run onto an existing branch names it upfront.
  const pushed = tail.events.find((event) => event.kind === 'branch_pushed')?.payload as
    { branch?: string } | undefined;
  const branch = pushed?.branch ?? run.targetBranch;
  const estimate = run.costBasis === 'subscription_estimate';
  const cost = run.costUsd ?? usage?.costUsd ?? null;
  const tokensIn = run.tokensInput ?? usage?.tokensInput ?? null;
  const tokensOut = run.tokensOutput ?? usage?.tokensOutput ?? null;

  const cancel = async () => {
    if (!confirm(`Cancel run ${run.id}? The agent is stopped; work it pushed stays.`)) return;
    setCancelling(true);
    setCancelError(undefined);
    try {
      await sendJson<CancelRunResult>('POST', `/runs/${encodeURIComponent(run.id)}/cancel`, {
        reason: 'cancelled from the dashboard',
      });
      await detail.reload();
    } catch (failure) {
      setCancelError(failure as ApiError);
    } finally {
      setCancelling(false);
    }
  };

  return (
    <section class="run-page" data-run-id={run.id} data-state={run.state}>
      <PageHeader
        title={
          <>
            <span class="mono">{run.id}</span> <StateBadge state={run.state} />
          </>
        }
      >
        {operator && active ? (
          <button type="button" class="danger" onClick={cancel} disabled={cancelling}>
            Cancel run
          </button>
        ) : null}
        {operator && run.previewState === 'live' ? <OpenPreview runId={run.id} /> : null}
        {operator && run.projectId ? (
          <a class="button" href={`/ui/dispatch?continue=${encodeURIComponent(run.id)}`}>
            Continue
          </a>
        ) : null}
        {operator ? (
          <a class="button" href={`/ui/dispatch?replicate=${encodeURIComponent(run.id)}`}>
            Replicate
          </a>
        ) : null}
        {detail.data?.links.temporalUi ? (
          <a class="button" href={httpUrl(detail.data.links.temporalUi)} target="_blank" rel="noopener noreferrer">
            Temporal UI
          </a>
        ) : null}
      </PageHeader>
      <ErrorBox error={cancelError} title="Not cancelled" />
      {run.pausedReason ? <PausedNotice run={run} operator={operator} onResumed={detail.reload} /> : null}
      {run.queueReason ? (
        <p class="notice" data-testid="run-queue-reason">
          Queued: {run.queueReason}
        </p>
      ) : null}
      <div class="run-grid">
        <div class="card">
          <Facts
            items={[
              ['Agent', run.agentName],
              // The model the agent reported, else the one asked for (never the provider: it names no model).
              ['Model', <span data-testid="run-model">{run.model ?? '—'}</span>],
              ['Project', <ProjectLink projectId={run.projectId} />],
              ['Trigger', run.trigger],
              ['Cost', <span data-testid="run-cost">{money(cost, estimate)}</span>],
              ['Tokens', <span data-testid="run-tokens">{`${count(tokensIn)} in · ${count(tokensOut)} out`}</span>],
              ['Created', when(run.createdAt)],
              ['Duration', run.startedAt ? span(run.startedAt, run.endedAt ?? (active ? now : null)) : '—'],
              ['Failure', run.failureReason ? run.failureReason.replace(/_/g, ' ') : '—'],
              [
                'Parent',
                run.parentRunId ? (
                  <a
                    href={`/ui/runs/${encodeURIComponent(run.parentRunId)}`}
                  >{`${run.parentRunId} (${run.cloneKind ?? 'child'})`}</a>
                ) : (
                  '—'
                ),
              ],
              ['Seed', run.seedId ?? '—'],
            ]}
          />
        </div>
        <div class="card">
          <h2>Change</h2>
          <Facts
            items={[
              ['Branch', branch ? <code>{branch}</code> : '—'],
              ['Commits ahead', run.commitsAhead ?? '—'],
              ['Files changed', run.filesChanged ?? '—'],
              [
                'Lines',
                run.insertions === null && run.deletions === null ? (
                  '—'
                ) : (
                  <span>
                    <span class="added">+{run.insertions ?? 0}</span> <span class="removed">−{run.deletions ?? 0}</span>
                  </span>
                ),
              ],
              [
                'Pull request',
                run.prUrl ? (
                  <a href={httpUrl(run.prUrl)} target="_blank" rel="noopener noreferrer" data-testid="pr-link">
                    {run.prUrl.replace(/^https?:\/\/[^/]+\//, '')} <StateBadge state={run.prState} />
                  </a>
                ) : (
                  '—'
                ),
              ],
              ['Preview', <PreviewFact run={run} />],
              ['Salvaged to', run.salvageRef ? <code>{run.salvageRef}</code> : '—'],
            ]}
          />
        </div>
      </div>
      <PrLoopCard run={run} events={tail.events} operator={operator} />
      <details class="card prompt" open={run.prompt.length < 600}>
        <summary>Prompt</summary>
        <pre>{run.prompt || 'hidden'}</pre>
      </details>
      {operator ? <SteerBox runId={run.id} events={tail.events} open={run.state === 'running'} /> : null}
      <section class="card" aria-labelledby="events-title">
        <h2 id="events-title">Events {tail.streaming ? <span class="live live-live">live</span> : null}</h2>
        <EventTail tail={tail} />
      </section>
      {/* After the log: a diff that grows as the agent commits moves nothing a reader is looking at. */}
      {run.projectId ? (
        <RunDiffCard
          runId={run.id}
          active={active}
          version={`${run.state}:${run.commitsAhead}:${run.filesChanged}:${pushes(tail.events)}`}
        />
      ) : null}
    </section>
  );
}
