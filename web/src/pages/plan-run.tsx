// One plan-run: its state and settings, the children in order with their runs, costs and PRs, the
// union of their events as they happen, and the operator's cancel and resume.
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { useQuery } from '../api/cache.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import { identity } from '../api/identity.ts';
import { planRunLagsItsRuns } from '../api/plan-run-lag.ts';
import type {
  CancelPlanRunResult,
  PlanRunChildView,
  PlanRunDetail,
  PlanRunRun,
  ResumePlanRunResult,
} from '../api/types.ts';
import { PlanChildren } from '../components/plan-children.tsx';
import { usePlanRunEvents } from '../components/plan-events.tsx';
import { EventTail } from '../components/event-tail.tsx';
import { ErrorBox, Facts, Loading, PageHeader, StateBadge } from '../components/ui.tsx';
import { useNow, useReReadWhile, useTitle } from '../components/hooks.ts';
import { money, span, when, httpUrl } from '../format.ts';
import { ProjectLink } from '../components/project-link.tsx';

/** The runs' summed cost; an estimate as soon as one of them is. */
function totalCost(runs: PlanRunRun[]): string {
  const priced = runs.filter((run) => run.costUsd !== null);
  if (priced.length === 0) return '—';
  const sum = priced.reduce((total, run) => total + run.costUsd!, 0);
  return money(
    sum,
    priced.some((run) => run.costBasis === 'subscription_estimate'),
  );
}

/** `3 merged · 1 running · 4 pending`, in the order children move through. */
function progress(children: PlanRunChildView[]): string {
  const counts = new Map<string, number>();
  for (const child of children) counts.set(child.state, (counts.get(child.state) ?? 0) + 1);
  const order = ['merged', 'pr_open', 'running', 'dispatched', 'pending', 'failed', 'skipped'];
  const parts = order
    .filter((state) => counts.has(state))
    .map((state) => `${counts.get(state)} ${state.replace(/_/g, ' ')}`);
  return parts.length ? parts.join(' · ') : 'none';
}

export function PlanRunPage() {
  const { params } = useRoute();
  const id = params.id!;
  useTitle(`Plan-run ${id}`);
  const path = `/plan-runs/${encodeURIComponent(id)}`;
  const detail = useQuery<PlanRunDetail>(path);
  const planRun = detail.data?.planRun;
  const active = planRun ? planRun.state === 'queued' || planRun.state === 'running' : false;
  const operator = identity.value.kind === 'operator';
  // A spectator's stream never follows (the server answers the history and closes), so a spectator
  // re-reads it whenever the polled plan-run comes back, until it ends.
  const tail = usePlanRunEvents(id, planRun ? active && operator : null, active && !operator ? detail.data : undefined);
  // The plan's own steps (a child merged, the plan-run ended) reach no lifecycle line: its events say them.
  const planSteps = tail.events.filter((event) => event.kind.startsWith('plan_run.')).length;
  useEffect(() => {
    if (planSteps > 0) void detail.reload();
  }, [planSteps]);
  // The children are projected after their runs: a read in between is re-read until they agree.
  useReReadWhile(Boolean(active && detail.data && planRunLagsItsRuns(detail.data)), detail.reload);
  const now = useNow(active);
  const [actionError, setActionError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');

  if (detail.error) return <ErrorBox error={detail.error} title={`Plan-run ${id}`} />;
  if (!planRun || !detail.data) return <Loading lines={10} />;
  const { children, runs, links } = detail.data;
  const resumable = planRun.state === 'failed' || planRun.state === 'cancelled';
  const settings = 'promptTemplate' in planRun ? planRun : null;

  const act = async (action: 'cancel' | 'resume', body: Record<string, string>) => {
    setBusy(true);
    setActionError(undefined);
    try {
      await sendJson<CancelPlanRunResult | ResumePlanRunResult>('POST', `${path}/${action}`, body);
      if (action === 'resume') setNote('');
      await detail.reload();
    } catch (failure) {
      setActionError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };
  const cancel = () => {
    if (confirm(`Cancel plan-run ${planRun.id}? Its running child run is stopped too; pushed work and PRs stay.`))
      void act('cancel', {});
  };
  const resume = (event: Event) => {
    event.preventDefault();
    // The API names the operator's note `reason` (resumePlanRunBody).
    void act('resume', note.trim() ? { reason: note.trim() } : {});
  };
  const labels = new Map(children.flatMap((child) => (child.runId ? [[child.runId, `#${child.seq}`] as const] : [])));

  return (
    <section class="plan-run-page" data-plan-run-id={planRun.id} data-state={planRun.state}>
      <PageHeader
        title={
          <>
            <span class="mono">{planRun.id}</span> <StateBadge state={planRun.state} />
          </>
        }
      >
        {operator && active ? (
          <button type="button" class="danger" onClick={cancel} disabled={busy}>
            Cancel plan-run
          </button>
        ) : null}
        {links.temporalUi ? (
          <a class="button" href={httpUrl(links.temporalUi)} target="_blank" rel="noopener noreferrer">
            Temporal UI
          </a>
        ) : null}
      </PageHeader>
      {operator && resumable ? (
        <form class="row card" onSubmit={resume} aria-label="Resume the plan-run">
          <label>
            Note
            <input
              value={note}
              maxLength={1000}
              placeholder="why resume (optional)"
              onInput={(event) => setNote(event.currentTarget.value)}
            />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Resuming…' : 'Resume'}
          </button>
          <span class="muted">Goes on from the first unfinished child.</span>
        </form>
      ) : null}
      <ErrorBox error={actionError} title="The plan-run did not change" />
      <div class="run-grid">
        <div class="card">
          <Facts
            items={[
              ['Project', <ProjectLink projectId={planRun.projectId} />],
              ['Agent', planRun.agentName],
              [
                'Source',
                planRun.source === 'plan' ? (
                  <span>
                    plan <span class="mono">{planRun.planId ?? '—'}</span>
                  </span>
                ) : (
                  `issues (${children.length})`
                ),
              ],
              ['Trigger', planRun.trigger],
              ['Children', progress(children)],
              ['Total cost', <span data-testid="plan-run-cost">{totalCost(runs)}</span>],
              ['Created', when(planRun.createdAt)],
              ['Started', when(planRun.startedAt)],
              ['Ended', when(planRun.endedAt)],
              ...(planRun.resumedAt ? [['Resumed', when(planRun.resumedAt)] as [string, string]] : []),
              ['Duration', planRun.startedAt ? span(planRun.startedAt, planRun.endedAt ?? (active ? now : null)) : '—'],
              ['Failure', settings?.failureReason ? settings.failureReason.replace(/_/g, ' ') : '—'],
            ]}
          />
        </div>
        <div class="card">
          <h2>Settings</h2>
          <Facts
            items={[
              ['Git ref', planRun.ref ? <code>{planRun.ref}</code> : 'the default branch'],
              ['Provider', settings ? (settings.providerOverride ?? "the agent's") : 'hidden'],
              ['Model', settings ? (settings.modelOverride ?? "the agent's") : 'hidden'],
              [
                'Cost cap per child',
                settings ? (settings.maxCostUsd === null ? 'none' : money(settings.maxCostUsd)) : 'hidden',
              ],
              ['Dispatched by', settings ? settings.dispatcherHandle : 'hidden'],
            ]}
          />
          {settings ? (
            <details class="prompt">
              <summary>Prompt template</summary>
              <pre>{settings.promptTemplate}</pre>
            </details>
          ) : null}
        </div>
      </div>
      <section class="card" aria-labelledby="children-title">
        <h2 id="children-title">Children</h2>
        <PlanChildren rows={children} runs={runs} now={now} />
      </section>
      <section class="card" aria-labelledby="events-title">
        <h2 id="events-title">Events {tail.streaming ? <span class="live live-live">live</span> : null}</h2>
        <EventTail tail={tail} label="Plan-run events" childLabels={labels} />
      </section>
    </section>
  );
}
