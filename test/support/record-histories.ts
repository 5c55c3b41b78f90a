// Records real workflow histories for the replay test, into this release's directory
// (test/support/histories.ts): run it for every release, and whenever a workflow change alters the
// commands it issues (behind patched(): CONTRIBUTING.md, "Changing a workflow"). The directories of
// earlier releases stay as they are, and keep replaying, until no history of theirs can be open.
//   node test/support/record-histories.ts [file.json …]   (default: every scenario)
// healerWorkflow's is recorded by test/api/alerts-heal.test.ts with SVC_RECORD_HISTORIES=1.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';
import { RELEASE_HISTORIES } from './histories.ts';
import { planFixture } from './plan-fixture.ts';
import { waitFor } from './processes.ts';
import { startIsolatedStack, waitForRunState } from './stack.ts';

const scenarios: { file: string; prompt: string; cancel?: boolean }[] = [
  { file: 'run-succeeded.json', prompt: 'echo recording\necho done' },
  { file: 'run-failed.json', prompt: 'echo about to fail\nexit 2' },
  { file: 'run-cancelled.json', prompt: 'echo waiting\nsleep 60', cancel: true },
];

/** Saves a workflow's history as the Temporal UI and CLI export it; `complete`: after it completed. */
async function saveHistory(connection: Connection, workflowId: string, file: string, complete = true): Promise<void> {
  // The whole history: wait for the workflow to complete, not only for its terminal projection
  // (a history saved earlier stops at a workflow task and replays only a prefix).
  // A run's workflow closes Failed or Canceled when the run ends so: closed is all this waits for.
  const handle = new Client({ connection }).workflow.getHandle(workflowId);
  if (complete) await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  mkdirSync(RELEASE_HISTORIES, { recursive: true });
  const target = join(RELEASE_HISTORIES, file);
  // The canonical proto3 JSON, the same format the Temporal UI and CLI export.
  writeFileSync(target, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
  console.log(`recorded ${target} (${history.events?.length} events)`);
}

const wanted = (file: string) => process.argv.length <= 2 || process.argv.slice(2).includes(file);
// A plan-run of two seeds, each merged by the forge stand-in's reviewer, its first child run (a
// run that reports to its plan-run and hands its open PR over), and the workflow that followed
// that PR until it was merged (workflows/pull-request.workflow.ts).
const planFiles = ['plan-run-succeeded.json', 'plan-run-child.json', 'pull-request.json'];
const fixture = planFiles.some(wanted)
  ? await planFixture('acme', 'recorded', ['Record one', 'Record two'])
  : undefined;
if (fixture) Object.assign(process.env, fixture.env);
const isolated = await startIsolatedStack();
const connection = await Connection.connect({ address: isolated.temporal.address });
try {
  const { api } = isolated;
  const save = (workflowId: string, file: string) => saveHistory(connection, workflowId, file);

  if (fixture) {
    const project = (await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/recorded' } }))
      .body.project.id;
    const { body } = await api.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', planId: fixture.planId, promptTemplate: fixture.template },
    });
    const done = await waitFor(
      async () => {
        const { body: plan } = await api.request('GET', `/plan-runs/${body.planRun.id}`);
        return plan.planRun.state === 'succeeded' ? plan : undefined;
      },
      'the recorded plan-run',
      120_000,
    );
    if (wanted(planFiles[0]!)) await save(body.planRun.id, planFiles[0]!);
    if (wanted(planFiles[1]!)) await save(done.children[0].runId, planFiles[1]!);
    if (wanted(planFiles[2]!)) await save(pullRequestWorkflowId(done.children[0].runId), planFiles[2]!);
    fixture.stopReviewer();
    await fixture.forge.stop();
  }
  for (const scenario of scenarios.filter((candidate) => wanted(candidate.file))) {
    const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: scenario.prompt } });
    if (scenario.cancel) {
      await waitForRunState(api, body.run.id, ['running']);
      await api.request('POST', `/runs/${body.run.id}/cancel`, { body: { reason: 'recorded' } });
    }
    await waitForRunState(api, body.run.id);
    await save(body.run.id, scenario.file);
  }
} finally {
  await connection.close();
  await isolated.stop();
}

// A run that waited for a slot under SVC_MAX_CONCURRENT_RUNS=1, and the admission queue that held
// it (which never completes: its history is kept as a prefix).
const admissionFiles = ['run-admitted.json', 'admission.prefix.json'];
if (admissionFiles.some(wanted)) {
  const limited = await startIsolatedStack({ env: { SVC_MAX_CONCURRENT_RUNS: '1' } });
  const limitedConnection = await Connection.connect({ address: limited.temporal.address });
  try {
    const dispatch = async (prompt: string) =>
      (await limited.api.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;
    const holder = await dispatch('echo holding\nsleep 60');
    await waitForRunState(limited.api, holder, ['running']);
    const waiting = await dispatch('echo admitted\necho done');
    await waitFor(
      async () => (await limited.api.request('GET', `/runs/${waiting}`)).body.run.queueReason,
      'the run to wait',
    );
    await limited.api.request('POST', `/runs/${holder}/cancel`, { body: { reason: 'recorded' } });
    await waitForRunState(limited.api, waiting);
    if (wanted(admissionFiles[0]!)) await saveHistory(limitedConnection, waiting, admissionFiles[0]!);
    const queue = `svc-admission-${limited.environment.env.SVC_TASK_QUEUE}`;
    if (wanted(admissionFiles[1]!)) await saveHistory(limitedConnection, queue, admissionFiles[1]!, false);
  } finally {
    await limitedConnection.close();
    await limited.stop();
  }
}
