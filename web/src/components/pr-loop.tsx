// The PR loop of a run (docs/pr-loop.md), from its `pr_loop.*` events: each follow-up round (what
// started it, its run, how it ended), what svc said on the PR and the merge it asked for, with the
// PR's rounds and total cost.
import { useEffect, useState } from 'preact/hooks';
import type { RunDetail, RunEvent } from '../api/types.ts';
import { money, when } from '../format.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import { ErrorBox, Facts, StateBadge } from './ui.tsx';

/** How often an ended run with an open PR re-reads its log. */
const PR_LOOP_REREAD_MS = 10_000;

/** A counter that moves every PR_LOOP_REREAD_MS while enabled (a re-read key for the event tail). */
export function usePrLoopTick(enabled: boolean): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!enabled) return;
    const timer = setInterval(() => setTick((value) => value + 1), PR_LOOP_REREAD_MS);
    return () => clearInterval(timer);
  }, [enabled]);
  return tick;
}

/** What started a round, as people say it. */
const ROUND_KINDS: Record<string, string> = {
  ci_fix: 'failing checks',
  review: 'changes requested',
  comment: 'comment to svc',
  rebase: 'conflict with the base',
};

interface RoundView {
  round: number;
  kind: string;
  runId: string;
  state: string;
  startedAt: string;
}

/** The rounds, the comments and the merges the loop's events tell of, in order. */
export function prLoopView(events: RunEvent[]) {
  const rounds = new Map<number, RoundView>();
  const said: { ts: string; text: string }[] = [];
  for (const event of events) {
    const payload = (event.payload ?? {}) as Record<string, any>;
    if (event.kind === 'pr_loop.follow_up_started')
      rounds.set(payload.round, { ...payload, state: 'running', startedAt: event.ts } as RoundView);
    else if (event.kind === 'pr_loop.follow_up_ended') {
      const started = rounds.get(payload.round);
      rounds.set(payload.round, { ...payload, startedAt: started?.startedAt ?? event.ts } as RoundView);
    } else if (event.kind === 'pr_loop.commented') said.push({ ts: event.ts, text: String(payload.body ?? '') });
    else if (event.kind === 'pr_loop.merge_requested')
      said.push({ ts: event.ts, text: `merged ${String(payload.sha ?? '').slice(0, 7)} (${payload.method})` });
    else if (event.kind === 'pr_loop.merge_refused')
      said.push({ ts: event.ts, text: `merge refused: ${String(payload.reason ?? '')}` });
    else if (event.kind === 'pr_loop.stopped') said.push({ ts: event.ts, text: 'stopped by an operator' });
  }
  return { rounds: [...rounds.values()].sort((a, b) => a.round - b.round), said };
}

export function PrLoopCard(props: { run: RunDetail['run']; events: RunEvent[]; operator: boolean }) {
  const { run, events, operator } = props;
  const { rounds, said } = prLoopView(events);
  const [stopError, setStopError] = useState<ApiError>();
  if (!rounds.length && !said.length && !run.prRounds) return null;
  const stopped = events.some((event) => event.kind === 'pr_loop.stopped');
  const stop = async () => {
    if (!confirm('Stop answering this PR? svc keeps following it, and a round under way is cancelled.')) return;
    setStopError(undefined);
    await sendJson('POST', `/runs/${encodeURIComponent(run.id)}/cancel`, {
      reason: 'PR loop stopped from the dashboard',
    }).catch((failure: ApiError) => setStopError(failure));
  };
  return (
    <section class="card pr-loop" aria-labelledby="pr-loop-title" data-testid="pr-loop">
      <h2 id="pr-loop-title">Pull-request loop</h2>
      {operator && run.prState === 'open' && !stopped ? (
        <button type="button" class="danger" onClick={stop}>
          Stop the loop
        </button>
      ) : null}
      <ErrorBox error={stopError} title="Not stopped" />
      <Facts
        items={[
          ['Rounds', <span data-testid="pr-rounds">{run.prRounds ?? rounds.length}</span>],
          ['PR cost', <span data-testid="pr-cost">{money(run.prCostUsd)}</span>],
        ]}
      />
      {rounds.length ? (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Round</th>
              <th scope="col">Answering</th>
              <th scope="col">Run</th>
              <th scope="col">State</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {rounds.map((round) => (
              <tr key={round.round} data-round={round.round}>
                <td>{round.round}</td>
                <td>{ROUND_KINDS[round.kind] ?? round.kind}</td>
                <td>
                  <a class="mono" href={`/ui/runs/${encodeURIComponent(round.runId)}`}>
                    {round.runId}
                  </a>
                </td>
                <td>
                  <StateBadge state={round.state} />
                </td>
                <td>{when(round.startedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {said.length ? (
        <ul class="pr-loop-said">
          {said.map((line, index) => (
            <li key={index}>
              <span class="muted">{when(line.ts)}</span> {line.text}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
