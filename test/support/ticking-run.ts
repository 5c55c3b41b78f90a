// The run the durability tests disturb: an agent that records each start in a marker file, then
// prints eight ticks a second apart. What must hold after any crash is checked in one place.
import type { ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminalRunState } from '../../core/run-states.ts';
import { RunEntity, RunEventEntity } from '../../db/entities/index.ts';
import { eventsOfRows } from '../../db/run-event-chunks.ts';
import type { ReadModel } from '../../db/orm.ts';
import { waitFor } from './processes.ts';
import type { TestResponse } from './stack.ts';

type Api = { request(method: string, path: string, options?: { body?: unknown }): Promise<TestResponse> };

const TICKS = 8;

/** The shell agent's prompt. The marker lives in the workspace: the only place a sandboxed agent may write. */
export const TICKING_PROMPT =
  'echo started >> agent-starts.log\n' + `for i in $(seq 1 ${TICKS}); do echo tick $i; sleep 1; done`;

/** Where a ticking run's agent records its starts, from the dispatch's answer. */
export const markerOf = (dispatched: { sandbox: { workspacePath: string } }) =>
  join(dispatched.sandbox.workspacePath, 'agent-starts.log');

export async function startTickingRun(api: Api, readModel: ReadModel): Promise<{ runId: string; marker: string }> {
  const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: TICKING_PROMPT } });
  const runId = body.run.id as string;
  await waitForTicks(readModel, runId);
  return { runId, marker: markerOf(body) };
}

/** Until the run's agent has printed twice (it is under way), or throws if the run ended first. */
export async function waitForTicks(readModel: ReadModel, runId: string): Promise<void> {
  // Generous (a loaded CI machine starts pods slowly), and a run that ends before printing says how.
  await waitFor(
    async () => {
      const printed = await readModel.em().find(RunEventEntity, { runId, kind: 'log.stdout' });
      if (eventsOfRows(printed).length >= 2) return true;
      const run = await readModel.em().findOne(RunEntity, { id: runId });
      if (run && isTerminalRunState(run.state))
        throw new Error(`the run ended before printing: ${JSON.stringify(run)}`);
      return false;
    },
    'the agent to print',
    120_000,
  );
}

/** Started once, every line recorded once and in order, one pass through the states, no seq gaps. */
export async function assertRanExactlyOnce(
  t: ExecutionContext,
  readModel: ReadModel,
  runId: string,
  marker: string,
): Promise<void> {
  t.is(readFileSync(marker, 'utf8'), 'started\n', 'the agent process was started exactly once');
  // The run's row and its events are written by two transactions: the terminal line follows the
  // terminal row by a moment.
  const terminalLine = () => readModel.em().count(RunEventEntity, { runId, dedupeKey: 'state:terminal' });
  await waitFor(async () => (await terminalLine()) > 0, 'the terminal state line', 10_000).catch(() => undefined);
  const log = eventsOfRows(await readModel.em().find(RunEventEntity, { runId }, { orderBy: { seq: 'asc' } }));
  t.deepEqual(
    log.filter((e) => e.stream === 'stdout').map((e) => (e.payload as { text: string }).text),
    Array.from({ length: TICKS }, (_, i) => `tick ${i + 1}`),
    'every output line recorded once, in order',
  );
  t.deepEqual(
    log.filter((e) => e.kind === 'state_change').map((e) => (e.payload as { state: string }).state),
    ['queued', 'running', 'succeeded'],
  );
  t.deepEqual(
    log.map((e) => e.seq),
    log.map((_, i) => i + 1),
  );
}
