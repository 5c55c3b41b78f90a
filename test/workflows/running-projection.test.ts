// The `running` projection is written by the startAgent activity, not by a local activity in the
// workflow task after it (workflows/run-start.ts): the real runWorkflow, on the suite's Temporal
// server, with activities that record what the workflow asks of them. Checked here: which
// projections the workflow writes itself, with which versions, when the activity projected, when
// a steering message was published while the agent started (the workflow publishes the running
// run again, newer), when the activity did not project (a worker from before the change, or a
// read model that was away), and when messages were folded into the prompt (no second copy of it).
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import type { AgentDefinition } from '../../core/agents.ts';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { foldIntoPrompt, type InboxItem } from '../../core/inbox.ts';
import { newId } from '../../core/ids.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { runningRun, type ProjectedRun } from '../../core/run-started.ts';
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

/** A worker whose activities record the projections; `startAgent` waits for `release` when given one. */
async function withRecordingWorker(
  options: { activityProjects: boolean; release?: Promise<void> },
  work: (
    client: Client,
    taskQueue: string,
    written: Projection[],
    started: { snapshot?: ProjectedRun; called?: boolean },
  ) => Promise<void>,
) {
  const taskQueue = `running-projection-${newId('run')}`;
  const written: Projection[] = [];
  const started: { snapshot?: ProjectedRun; called?: boolean } = {};
  async function start({
    projectRunning,
    prompt,
    agent,
  }: {
    projectRunning?: { snapshot: ProjectedRun; workspaceKind: string };
    prompt: string;
    agent: AgentDefinition;
  }) {
    started.snapshot = projectRunning?.snapshot;
    started.called = true;
    await options.release;
    const outcome = STARTED_AGENT;
    if (!options.activityProjects || !projectRunning) return outcome;
    // As the real activity does: the run's prompt and agent are its own input's.
    const run = { ...projectRunning.snapshot, prompt, renderedAgentJson: agent };
    written.push(runningRun(run, outcome, projectRunning.workspaceKind));
    return { ...outcome, runningProjected: true };
  }
  await withTestWorker(
    {
      taskQueue,
      workflowBundle,
      activities: {
        async projectRun(projection: Projection) {
          written.push(projection);
        },
        // The combined start (activities/start-activities.ts): a scratch workspace, then the start.
        async prepareAndStartAgent({
          workspace,
          claimed,
          projectRunning,
          prompt,
          agent,
        }: {
          workspace: { workspacePath: string };
          claimed: InboxItem[];
          projectRunning?: { snapshot: ProjectedRun };
          prompt: string;
          agent: AgentDefinition;
        }) {
          const { workspacePath } = workspace;
          const outcome = await start({
            prompt: foldIntoPrompt(prompt, claimed),
            agent,
            ...(projectRunning
              ? {
                  projectRunning: { snapshot: { ...projectRunning.snapshot, workspacePath }, workspaceKind: 'scratch' },
                }
              : {}),
          });
          return { ...outcome, workspace: { workspacePath, kind: 'scratch' as const } };
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

/** The finished run's history replays against the same code (each path here is deterministic). */
async function replays(t: ExecutionContext, handle: WorkflowHandle) {
  await t.notThrowsAsync(Worker.runReplayHistory({ workflowBundle }, await handle.fetchHistory()));
}

const stateAndVersion = (written: Projection[]) =>
  written.map(({ snapshot }) => `${snapshot.state}@${snapshot.projectionVersion}`);

test('the start activity writes the running run: the workflow itself projects only queued and the end', async (t) => {
  await withRecordingWorker({ activityProjects: true }, async (client, taskQueue, written, started) => {
    const handle = await startRun(client, taskQueue);
    t.is((await handle.result()).state, 'succeeded');
    await replays(t, handle);
    t.deepEqual(stateAndVersion(written), ['queued@1', 'running@2', 'succeeded@3']);
    // The activity was handed the run before its start, with the version its projection takes,
    // and without the prompt and agent its own input carries.
    t.is(started.snapshot?.state, 'queued');
    t.is(started.snapshot?.projectionVersion, 2);
    t.false('prompt' in started.snapshot!);
    t.false('renderedAgentJson' in started.snapshot!);
    t.is(written[1]!.snapshot.prompt, 'true');
    t.deepEqual(
      written[1]!.events.map((event) => event.dedupeKey),
      ['sandbox:started', 'state:running'],
    );
    // What the read model got is what the workflow holds.
    t.is(written[2]!.snapshot.startedAt, '2026-11-29T00:00:01.000Z');
    t.is(written[2]!.snapshot.sandboxRunId, 'sandbox-run-1');
    const history = await handle.fetchHistory();
    const markers = history.events!.filter(
      (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    t.is(markers.length, 2, 'two local activities: queued and the end');
    // One activity cut the workspace and started the agent; the running run says where it works.
    const scheduled = history.events!.flatMap(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    t.deepEqual(scheduled, ['prepareAndStartAgent', 'superviseAgent']);
    t.truthy(written[1]!.snapshot.workspacePath);
    t.is(written[1]!.snapshot.workspacePath, written[2]!.snapshot.workspacePath);
  });
});

test('a message published while the agent starts: the workflow projects the running run again, newer', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await withRecordingWorker(
    { activityProjects: true, release: released },
    async (client, taskQueue, written, started) => {
      const handle = await startRun(client, taskQueue);
      await waitFor(async () => started.called, 'the start activity', 20_000);
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
      // The activity's running@2 is older than the steer's queued@3: running@4 follows, with its events.
      t.deepEqual(stateAndVersion(written), ['queued@1', 'queued@3', 'running@2', 'running@4', 'succeeded@5']);
      t.deepEqual(
        written[3]!.events.map((event) => event.dedupeKey),
        ['sandbox:started', 'state:running'],
      );
    },
  );
});

test('a start activity that does not project (an older worker): the workflow projects the running run', async (t) => {
  await withRecordingWorker({ activityProjects: false }, async (client, taskQueue, written) => {
    const handle = await startRun(client, taskQueue);
    t.is((await handle.result()).state, 'succeeded');
    await replays(t, handle);
    t.deepEqual(stateAndVersion(written), ['queued@1', 'running@3', 'succeeded@4']);
    t.deepEqual(
      written[1]!.events.map((event) => event.dedupeKey),
      ['sandbox:started', 'state:running'],
    );
  });
});

test('messages folded into the prompt: the start activity is not asked to project, the workflow does', async (t) => {
  await withRecordingWorker({ activityProjects: true }, async (client, taskQueue, written, started) => {
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
    t.true(started.called);
    t.is(started.snapshot, undefined, "the prompt differs from the run's: no snapshot for the activity");
    const running = written.filter(({ snapshot }) => snapshot.state === 'running');
    t.is(running.length, 1);
    t.is(running[0]!.snapshot.prompt, 'true', "the run's own prompt, not the folded one");
  });
});
