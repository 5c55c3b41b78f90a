// The start activity's look at its workflow (activities/start-activities.ts): the real
// prepareAndStartAgent and the real runWorkflow on the suite's Temporal server, with only the agent's
// launch and supervision faked. Checked here: an attempt that retries (its worker died before the
// launch) looks at the workflow even for a scratch workspace, and folds the messages steered
// meanwhile into the prompt; a claim repeated with the same update id (a retry after an attempt
// that claimed) gets the same messages back, not an empty inbox.
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createStartActivities, startGate } from '../../activities/start-activities.ts';
import type { RunActivityDeps } from '../../activities/run-activities.ts';
import { newId } from '../../core/ids.ts';
import { steerSignal } from '../../workflows/messages.ts';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { cleanExitSupervision, STARTED_AGENT, startTrivialRun, withTestWorker } from '../support/fake-agent.ts';
import { waitFor } from '../support/processes.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

const workflowBundle = process.env.SVC_WORKFLOW_BUNDLE
  ? { code: readFileSync(process.env.SVC_WORKFLOW_BUNDLE, 'utf8') }
  : await buildWorkflowBundle();

const message = (id: string, body: string) => ({
  id,
  body,
  priority: 'normal' as const,
  fromActor: 'test',
  createdAt: new Date().toISOString(),
});

/**
 * A worker with the real start activity; `launch` stands in for startAgent. `projected` counts the
 * steering deliveries the workflow projected.
 */
async function withWorker(
  launch: (input: { prompt: string }) => Promise<typeof STARTED_AGENT>,
  work: (client: Client, taskQueue: string, projected: { delivered: number }) => Promise<void>,
) {
  const taskQueue = `start-gate-${newId('run')}`;
  const projected = { delivered: 0 };
  const client = new Client({ connection: await Connection.connect({ address: suiteTemporalAddress() }) });
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-start-gate-'));
  const deps = {
    temporal: client,
    dataDir,
    projectsRoot: join(dataDir, 'projects'),
    sandbox: { mode: 'process', allowUnsandboxed: true },
  } as unknown as RunActivityDeps & { temporal: Client };
  await withTestWorker(
    {
      taskQueue,
      workflowBundle,
      activities: {
        ...createStartActivities(deps, { startAgent: launch as never }),
        async projectRun({ events }: { events: { kind: string }[] }) {
          projected.delivered += events.filter((event) => event.kind === 'steer.delivered').length;
        },
        ...cleanExitSupervision,
      },
    },
    () => work(client, taskQueue, projected),
    client,
  );
}

function startRun(client: Client, taskQueue: string) {
  return startTrivialRun(
    client,
    taskQueue,
    'the task',
    join(mkdtempSync(join(tmpdir(), 'svc-start-gate-ws-')), 'workspace'),
  );
}

test('a retried start asks its workflow, even in a scratch workspace, and folds in what was steered', async (t) => {
  const prompts: string[] = [];
  let client!: Client;
  let runId = '';
  await withWorker(
    async ({ prompt }) => {
      prompts.push(prompt);
      if (prompts.length > 1) return STARTED_AGENT;
      // The first attempt: a message comes in, then the worker "dies" before the launch.
      await client.workflow.getHandle(runId).signal(steerSignal, message('msg-1', 'mind the tests'));
      throw new Error('the worker died before the launch');
    },
    async (connected, taskQueue, projected) => {
      client = connected;
      const handle = await startRun(client, taskQueue);
      runId = handle.workflowId;
      t.is((await handle.result()).state, 'succeeded');
      t.is(prompts.length, 2);
      t.is(prompts[0], 'the task', 'the first attempt had nothing to fold');
      t.regex(prompts[1]!, /^the task\n[\s\S]*\[normal\] test: mind the tests/);
      t.is(projected.delivered, 1);
    },
  );
});

test('a claim repeated with the start gate update id answers the same messages', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await withWorker(
    async () => {
      await released;
      return STARTED_AGENT;
    },
    async (client, taskQueue, projected) => {
      const handle = await startRun(client, taskQueue);
      try {
        await waitFor(async () => (await handle.describe()).raw.pendingActivities?.length, 'the start activity');
        await handle.signal(steerSignal, message('msg-1', 'first'));
        await handle.signal(steerSignal, message('msg-2', 'second'));
        const first = await startGate(client, handle.workflowId, true);
        const again = await startGate(client, handle.workflowId, true);
        t.deepEqual(Array.isArray(first) && first.map((item) => item.id), ['msg-1', 'msg-2']);
        t.deepEqual(again, first, 'the same answer, not an empty inbox');
        t.is(projected.delivered, 2, 'delivered once');
      } finally {
        release();
      }
      t.is((await handle.result()).state, 'succeeded');
    },
  );
});
