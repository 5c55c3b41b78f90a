// The `running` projection is written by the startAgent activity, not by a local activity in the
// workflow task after it (workflows/run-start.ts): the real runWorkflow, on the suite's Temporal
// server, with activities that record what the workflow asks of them. Checked here: which
// projections the workflow writes itself, with which versions, when the activity projected, when
// a steering message was published while the agent started (the workflow publishes the running
// run again, newer), and when the activity did not project (a worker from before the change).
import test from 'ava';
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { runningRun } from '../../core/run-started.ts';
import { steerSignal } from '../../workflows/messages.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { waitFor } from '../support/processes.ts';

// The SDK logs every worker state change at INFO: only warnings and errors are worth reading here.
Runtime.install({ logger: new DefaultLogger('WARN') });

type Projection = { snapshot: RunSnapshot; events: { dedupeKey: string }[] };

/** A worker whose activities record the projections; `startAgent` waits for `release` when given one. */
async function withRecordingWorker(
  options: { activityProjects: boolean; release?: Promise<void> },
  work: (
    client: Client,
    taskQueue: string,
    written: Projection[],
    started: { snapshot?: RunSnapshot },
  ) => Promise<void>,
) {
  const taskQueue = `running-projection-${newId('run')}`;
  const written: Projection[] = [];
  const started: { snapshot?: RunSnapshot } = {};
  const connection = await NativeConnection.connect({ address: suiteTemporalAddress() });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { code: readFileSync(process.env.SVC_WORKFLOW_BUNDLE!, 'utf8') },
    activities: {
      async projectRun(projection: Projection) {
        written.push(projection);
      },
      async prepareWorkspace({ workspacePath }: { workspacePath: string }) {
        return { workspacePath, kind: 'scratch' as const };
      },
      async startAgent({ projectRunning }: { projectRunning?: { snapshot: RunSnapshot; workspaceKind: string } }) {
        started.snapshot = projectRunning?.snapshot;
        await options.release;
        const outcome = {
          isolation: 'bubblewrap',
          sandbox: { isolation: 'bubblewrap' },
          costBasis: 'api' as const,
          memory: null,
          status: 'running' as const,
          sandboxRunId: 'sandbox-run-1',
          spawnedAt: '2026-11-29T00:00:01.000Z',
          endedAt: null,
          message: null,
        };
        if (!options.activityProjects || !projectRunning) return outcome;
        written.push(runningRun(projectRunning.snapshot, outcome, projectRunning.workspaceKind));
        return { ...outcome, runningProjected: true };
      },
      async superviseAgent() {
        return {
          spawnError: null,
          exitCode: 0,
          signal: null,
          stoppedBySvc: false,
          sawOutput: true,
          stderrHead: [],
          oomKilled: false,
          providerError: null,
          lost: false,
          endedAt: '2026-11-29T00:00:02.000Z',
          usage: null,
          costCap: null,
        };
      },
      async stopAgent() {},
      async agentActivity() {
        return { lastOutputAt: Date.now() };
      },
    },
  });
  const client = new Client({ connection: await Connection.connect({ address: suiteTemporalAddress() }) });
  try {
    await worker.runUntil(work(client, taskQueue, written, started));
  } finally {
    await client.connection.close();
    await connection.close();
  }
}

function startRun(client: Client, taskQueue: string) {
  const runId = newId('run');
  const input = buildRunInput(
    { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt: 'true', trigger: 'api' },
    '/tmp/svc-running-projection',
  );
  return client.workflow.start('runWorkflow', { taskQueue, workflowId: runId, args: [input] });
}

const stateAndVersion = (written: Projection[]) =>
  written.map(({ snapshot }) => `${snapshot.state}@${snapshot.projectionVersion}`);

test('the start activity writes the running run: the workflow itself projects only queued and the end', async (t) => {
  await withRecordingWorker({ activityProjects: true }, async (client, taskQueue, written, started) => {
    const handle = await startRun(client, taskQueue);
    t.is((await handle.result()).state, 'succeeded');
    t.deepEqual(stateAndVersion(written), ['queued@1', 'running@2', 'succeeded@3']);
    // The activity was handed the run before its start, with the version its projection takes.
    t.is(started.snapshot?.state, 'queued');
    t.is(started.snapshot?.projectionVersion, 2);
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
  });
});

test('a message published while the agent starts: the workflow projects the running run again, newer', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await withRecordingWorker(
    { activityProjects: true, release: released },
    async (client, taskQueue, written, started) => {
      const handle = await startRun(client, taskQueue);
      await waitFor(async () => started.snapshot, 'the start activity', 20_000);
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
    t.deepEqual(stateAndVersion(written), ['queued@1', 'running@3', 'succeeded@4']);
    t.deepEqual(
      written[1]!.events.map((event) => event.dedupeKey),
      ['sandbox:started', 'state:running'],
    );
  });
});
