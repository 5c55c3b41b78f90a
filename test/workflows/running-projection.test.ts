// The run's workflow is the only writer of its read-model projection, `running` included
// (docs/decisions/0040-svc-1-0-baseline.md): the real runWorkflow, on the suite's Temporal server,
// with activities that record what the workflow asks of them. Checked here: the start activity is
// handed no projection to write; the workflow's projections come in order, each newer than the one
// before, also when a steering message is published while the agent starts; the running run
// keeps its own prompt when messages were folded into the agent's.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { steerSignal } from '../../workflows/messages.ts';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { cleanExitSupervision, STARTED_AGENT, startTrivialRun, withTestWorker } from '../support/fake-agent.ts';
import { waitFor } from '../support/processes.ts';

// The SDK logs every worker state change at INFO: only warnings and errors are worth reading here.
Runtime.install({ logger: new DefaultLogger('WARN') });

const workflowBundle = process.env.SVC_WORKFLOW_BUNDLE
  ? { code: readFileSync(process.env.SVC_WORKFLOW_BUNDLE, 'utf8') }
  : await buildWorkflowBundle();

type Projection = { snapshot: RunSnapshot; events: { dedupeKey: string }[] };

/** A worker whose activities record the projections and the start's input; the start waits for `release`. */
async function withRecordingWorker(
  release: Promise<void> | undefined,
  work: (
    client: Client,
    taskQueue: string,
    written: Projection[],
    started: { input?: Record<string, unknown> },
  ) => Promise<void>,
) {
  const taskQueue = `running-projection-${newId('run')}`;
  const written: Projection[] = [];
  const started: { input?: Record<string, unknown> } = {};
  await withTestWorker(
    {
      taskQueue,
      workflowBundle,
      activities: {
        async projectRun(projection: Projection) {
          written.push(projection);
        },
        // The combined start (activities/start-activities.ts): a scratch workspace, then the start.
        async prepareAndStartAgent(input: { workspace: { workspacePath: string } } & Record<string, unknown>) {
          started.input = input;
          await release;
          return { ...STARTED_AGENT, workspace: { workspacePath: input.workspace.workspacePath, kind: 'scratch' } };
        },
        ...cleanExitSupervision,
      },
    },
    (client) => work(client, taskQueue, written, started),
  );
}

function startRun(client: Client, taskQueue: string) {
  return startTrivialRun(client, taskQueue, 'true', '/tmp/svc-running-projection');
}

/** The finished run's history replays against the same code. */
async function replays(t: ExecutionContext, handle: WorkflowHandle) {
  await t.notThrowsAsync(Worker.runReplayHistory({ workflowBundle }, await handle.fetchHistory()));
}

const stateAndVersion = (written: Projection[]) =>
  written.map(({ snapshot }) => `${snapshot.state}@${snapshot.projectionVersion}`);

test('the workflow writes every projection of the run, running included, each newer than the last', async (t) => {
  await withRecordingWorker(undefined, async (client, taskQueue, written, started) => {
    const handle = await startRun(client, taskQueue);
    t.is((await handle.result()).state, 'succeeded');
    await replays(t, handle);
    t.deepEqual(stateAndVersion(written), ['queued@1', 'running@2', 'succeeded@3']);
    t.false('projectRunning' in started.input!, 'the start activity is handed no projection to write');
    t.deepEqual(
      written[1]!.events.map((event) => event.dedupeKey),
      ['sandbox:started', 'state:running'],
    );
    t.is(written[1]!.snapshot.startedAt, '2026-11-29T00:00:01.000Z', 'running since the agent was spawned');
    t.is(written[1]!.snapshot.sandboxRunId, 'sandbox-run-1');
    t.truthy(written[1]!.snapshot.workspacePath);
    t.is(written[1]!.snapshot.workspacePath, written[2]!.snapshot.workspacePath);
    const history = await handle.fetchHistory();
    const markers = history.events!.flatMap((event) => event.markerRecordedEventAttributes?.markerName ?? []);
    t.deepEqual(markers, ['core_local_activity', 'core_local_activity', 'core_local_activity'], 'no patch marker');
    const scheduled = history.events!.flatMap(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    t.deepEqual(scheduled, ['prepareAndStartAgent', 'superviseAgent']);
  });
});

test('a message published while the agent starts: the projections stay in order', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await withRecordingWorker(released, async (client, taskQueue, written, started) => {
    const handle = await startRun(client, taskQueue);
    await waitFor(async () => started.input, 'the start activity', 20_000);
    await handle.signal(steerSignal, {
      id: 'msg-1',
      body: 'also do this',
      priority: 'normal',
      fromActor: 'test',
      createdAt: new Date().toISOString(),
    });
    await waitFor(async () => (written.length === 2 ? true : undefined), 'the steer projection', 20_000);
    release();
    t.is((await handle.result()).state, 'succeeded');
    await replays(t, handle);
    t.deepEqual(stateAndVersion(written), ['queued@1', 'queued@2', 'running@3', 'succeeded@4']);
    t.deepEqual(
      written[2]!.events.map((event) => event.dedupeKey),
      ['sandbox:started', 'state:running'],
    );
  });
});

test("messages folded into the agent's prompt: the running run keeps its own", async (t) => {
  await withRecordingWorker(undefined, async (client, taskQueue, written, started) => {
    const runId = newId('run');
    const input = buildRunInput(
      { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt: 'true', trigger: 'api' },
      '/tmp/svc-running-projection',
    );
    const message = {
      id: 'msg-1',
      body: 'first this',
      priority: 'normal' as const,
      fromActor: 'test',
      createdAt: new Date().toISOString(),
    };
    const handle = await client.workflow.signalWithStart('runWorkflow', {
      taskQueue,
      workflowId: runId,
      args: [input],
      signal: steerSignal,
      signalArgs: [message],
    });
    t.is((await handle.result()).state, 'succeeded');
    await replays(t, handle);
    t.deepEqual(
      (started.input!.claimed as { id: string }[]).map((item) => item.id),
      ['msg-1'],
    );
    const running = written.filter(({ snapshot }) => snapshot.state === 'running');
    t.is(running.length, 1);
    t.is(running[0]!.snapshot.prompt, 'true', "the run's own prompt, not the folded one");
  });
});
