// One durable run, end to end, through the real API, Temporal, worker and agent process.
import test from 'ava';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { RunEventEntity } from '../../db/entities/index.ts';
import { eventsOfRows } from '../../db/run-event-chunks.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const agentsDir = mkdtempSync(join(tmpdir(), 'svc-agents-'));
const agentsFile = join(agentsDir, 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: ghost',
    '    description: an agent whose executable does not exist',
    '    command: ["/nonexistent/agent-binary", "--print"]',
    '  - name: slowpoke',
    '    command: ["bash", "-c", "echo starting; sleep 60"]',
    '    maxDurationMinutes: 0.05',
    '  - name: echo-env',
    '    command: ["bash", "-c", "echo model=$SVC_MODEL; echo token=${SVC_API_TOKEN:-none}; cat"]',
    '    model: small-model',
  ].join('\n'),
);

async function events(svc: TestStack, runId: string) {
  return eventsOfRows(await svc.stack.readModel.em().find(RunEventEntity, { runId }, { orderBy: { seq: 'asc' } }));
}

for (const leg of DATABASE_LEGS) {
  test.serial(
    `${leg}: a run is accepted queued, runs, succeeds, and the read model agrees with the workflow`,
    async (t) => {
      if (!postgresOrSkip(t, leg)) return;
      const svc = await startTestStack({
        database: leg,
        env: { SVC_AGENTS_FILE: agentsFile, SVC_API_TOKEN: 'secret-operator-token' },
      });
      t.teardown(() => svc.stop());

      const dispatched = await svc.request('POST', '/runs', {
        body: {
          agent: 'shell',
          prompt: 'echo hello from $SVC_RUN_ID\necho warn >&2\nsleep 1\necho bye',
          trigger: 'cli',
        },
      });
      t.is(dispatched.status, 201, JSON.stringify(dispatched.body));
      const { run, sandbox } = dispatched.body;
      t.regex(run.id, /^run_[0-9a-z]{12}$/);
      t.is(run.state, 'queued');
      t.is(run.mode, 'batch');
      t.is(run.trigger, 'cli');
      t.is(typeof run.createdAt, 'number');
      t.is(run.costBasis, 'api');
      t.is(sandbox.id, run.sandboxId);
      t.true(sandbox.workspacePath.startsWith(svc.config.dataDir));

      // The accepted answer guarantees the row is readable at once.
      const immediately = await svc.request('GET', `/runs/${run.id}`);
      t.is(immediately.status, 200);
      t.is(immediately.body.run.id, run.id);

      const finished = await waitForRunState(svc, run.id);
      t.is(finished.state, 'succeeded');
      t.is(finished.failureReason, null);
      t.truthy(finished.startedAt);
      t.truthy(finished.endedAt);
      t.true(Date.parse(finished.endedAt) >= Date.parse(finished.startedAt));
      t.regex(finished.sandboxRunId, /^local:/);

      const connection = await Connection.connect({ address: svc.stack.temporalAddress });
      t.teardown(() => connection.close());
      const outcome = await new Client({ connection }).workflow.getHandle(run.id).result();
      t.deepEqual(outcome, {
        runId: run.id,
        state: 'succeeded',
        failureReason: null,
        prUrl: null,
        prState: null,
        costUsd: null,
      });

      const log = await events(svc, run.id);
      t.deepEqual(
        log.map((e) => e.seq),
        log.map((_, i) => i + 1),
      );
      const kinds = log.map((e) => e.kind);
      t.is(kinds[0], 'state_change');
      t.is(kinds.at(-1), 'state_change');
      t.deepEqual(
        log.filter((e) => e.stream === 'stdout').map((e) => (e.payload as { text: string }).text),
        [`hello from ${run.id}`, 'bye'],
      );
      t.deepEqual(
        log.filter((e) => e.stream === 'stderr').map((e) => (e.payload as { text: string }).text),
        ['warn'],
      );
      t.deepEqual(
        log.filter((e) => e.kind === 'state_change').map((e) => (e.payload as { state: string }).state),
        ['queued', 'running', 'succeeded'],
      );

      const list = await svc.request('GET', '/runs?limit=1&offset=0');
      t.is(list.status, 200);
      t.is(list.body.total, 1);
      t.is(list.body.limit, 1);
      t.is(list.body.offset, 0);
      t.is(list.body.runs[0].id, run.id);
      t.is(list.body.costTotalUsd, null);
      t.is(list.body.costPricedCount, 0);
    },
  );
}

test.serial('a missing executable fails the run with spawn_failed', async (t) => {
  const svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile } });
  t.teardown(() => svc.stop());
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'ghost', prompt: 'anything' } });
  const run = await waitForRunState(svc, body.run.id);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'spawn_failed');
  // The witness: the supervisor's spawn error (plain process), or bubblewrap's exec failure.
  const log = await events(svc, run.id);
  const witness = [
    String((log.at(-1)!.payload as { message?: string }).message),
    ...log.filter((e) => e.stream === 'stderr').map((e) => (e.payload as { text: string }).text),
  ].join('\n');
  t.regex(witness, /ENOENT|bwrap: execvp \/nonexistent\/agent-binary: No such file or directory/);
});

test.serial('exit codes map to crashed (output then non-zero) and no_model_response (silent non-zero)', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const crashed = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo working\nexit 3' } }))
    .body.run.id;
  const silent = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'exit 1' } })).body.run.id;
  const killed = (
    await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo about to die\nkill -KILL $$' } })
  ).body.run.id;
  t.like(await waitForRunState(svc, crashed), { state: 'failed', failureReason: 'crashed' });
  t.like(await waitForRunState(svc, silent), { state: 'failed', failureReason: 'no_model_response' });
  t.like(await waitForRunState(svc, killed), { state: 'failed', failureReason: 'agent_died' });
});

test.serial(
  'the agent sees its prompt and its model, and holds no svc token at all (its callbacks go through the callback ' +
    'proxy)',
  async (t) => {
    const svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile, SVC_API_TOKEN: 'do-not-leak' } });
    t.teardown(() => svc.stop());
    const { body } = await svc.request('POST', '/runs', {
      body: { agent: 'echo-env', prompt: 'the prompt on stdin', modelOverride: 'big-model' },
    });
    t.is(body.run.model, 'big-model');
    t.is(body.run.renderedAgentJson.model, 'big-model');
    await waitForRunState(svc, body.run.id);
    const stdout = (await events(svc, body.run.id))
      .filter((e) => e.stream === 'stdout')
      .map((e) => (e.payload as { text: string }).text);
    t.is(stdout[0], 'model=big-model');
    t.is(stdout[1], 'token=none', 'no token enters the sandbox: the callback proxy adds the run token outside it');
    t.false(stdout.join('\n').includes('do-not-leak'));
    t.is(stdout[2], 'the prompt on stdin');
  },
);

test.serial(
  'an agent past its maxDurationMinutes, or the instance ceiling, is stopped by the workflow timer: timed_out',
  async (t) => {
    // The ceiling (SVC_MAX_RUN_MINUTES) bounds an agent that keeps talking: no silence ever stops it.
    const svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile, SVC_MAX_RUN_MINUTES: '0.1' } });
    t.teardown(() => svc.stop());
    const { body } = await svc.request('POST', '/runs', { body: { agent: 'slowpoke', prompt: 'x' } });
    const chatter = await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'while true; do echo still here; sleep 0.2; done' },
    });
    const started = Date.now();
    const run = await waitForRunState(svc, body.run.id);
    t.like(run, { state: 'failed', failureReason: 'timed_out' });
    t.true(Date.now() - started < 30_000, 'stopped long before its own 60 s');
    t.like(
      (await events(svc, run.id)).find((event) => event.kind === 'duration.exceeded'),
      {
        payload: { maxDurationMinutes: 0.05, limitMinutes: 0.05 },
      },
    );
    t.like(await waitForRunState(svc, chatter.body.run.id), { state: 'failed', failureReason: 'timed_out' });
    t.like(
      (await events(svc, chatter.body.run.id)).find((event) => event.kind === 'duration.exceeded'),
      {
        payload: { maxDurationMinutes: null, limitMinutes: 0.1 },
      },
    );
  },
);

test.serial(
  'an agent silent past the heartbeat timeout is stopped by the silence watchdog and fails timed_out',
  async (t) => {
    const svc = await startTestStack({ env: { SVC_RUN_HEARTBEAT_TIMEOUT_MS: '3000' } });
    t.teardown(() => svc.stop());
    const { body } = await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'echo one line, then nothing\nsleep 60' },
    });
    const started = Date.now();
    const run = await waitForRunState(svc, body.run.id);
    t.like(run, { state: 'failed', failureReason: 'timed_out' });
    t.true(Date.now() - started < 30_000);
    t.true((await events(svc, run.id)).some((event) => event.kind === 'watchdog.silence_exceeded'));

    const chatty = (
      await svc.request('POST', '/runs', {
        body: { agent: 'shell', prompt: 'for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done' },
      })
    ).body.run.id;
    t.like(await waitForRunState(svc, chatty), { state: 'succeeded' }, 'an agent that keeps talking is left alone');
  },
);
