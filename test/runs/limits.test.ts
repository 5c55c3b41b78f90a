// The run's limits, enforced by svc whatever the runtime: the spend cap (a reported cost above it
// stops the agent mid-stream and cancels the run) and the sandbox memory limit (the kernel's OOM
// kill in the run's memory cgroup makes the run fail `oom_killed`).
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryCgroup, removeMemoryCgroup } from '../../sandbox/host/memory-cgroup.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
// Reports a cumulative spend of $0.20, then $0.60 (and says so), then would go on for a minute.
const SPENDER =
  'echo \'{"type":"svc.usage","costUsd":0.2,"tokensInput":100,"tokensOutput":10}\'; sleep 0.5; echo ' +
  '\'{"type":"svc.usage","costUsd":0.6,"tokensInput":300,"tokensOutput":30}\'; echo reported; sleep 60; echo ' +
  'finished';
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: spender',
    `    command: ["bash", "-c", ${JSON.stringify(SPENDER)}]`,
    '    maxCostUsd: 0.5',
  ].join('\n'),
);

async function eventsOf(svc: TestStack, runId: string): Promise<{ kind: string; payload: any }[]> {
  const { text } = await svc.request('GET', `/runs/${runId}/events?follow=0`);
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

test('a reported cost above the cap stops the agent and cancels the run; a higher per-run cap wins', async (t) => {
  const svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile } });
  t.teardown(() => svc.stop());
  const capped = (await svc.request('POST', '/runs', { body: { agent: 'spender', prompt: 'spend' } })).body.run;
  t.is(capped.renderedAgentJson.maxCostUsd, 0.5);
  const started = Date.now();
  const run = await waitForRunState(svc, capped.id, undefined, 30_000);
  t.like(run, { state: 'cancelled', failureReason: null, costUsd: 0.6, tokensInput: 300, tokensOutput: 30 });
  t.true(Date.now() - started < 30_000);
  const events = await eventsOf(svc, capped.id);
  t.like(
    events.find((event) => event.kind === 'cost.cap_exceeded'),
    { payload: { costUsd: 0.6, maxCostUsd: 0.5 } },
  );
  t.like(
    events.find((event) => event.kind === 'state_change' && event.payload.type === 'result'),
    { payload: { state: 'cancelled', reason: 'cost_cap_exceeded' } },
  );
  t.false(
    events.some((event) => event.kind === 'log.stdout' && event.payload.text === 'finished'),
    'the agent was stopped mid-stream',
  );

  // The run's own cap wins over the agent's: $0.60 is within $1, so the agent is not stopped on cost.
  const generous = (await svc.request('POST', '/runs', { body: { agent: 'spender', prompt: 'spend', maxCostUsd: 1 } }))
    .body.run;
  // The line after the $0.60 report has been read: so has the report (output is read in order).
  await waitFor(
    async () => (await runStdout(svc, generous.id)).includes('reported') || undefined,
    'the agent to say it reported $0.60',
    30_000,
  );
  t.is((await svc.request('GET', `/runs/${generous.id}`)).body.run.state, 'running');
  const cancel = await svc.request('POST', `/runs/${generous.id}/cancel`, { body: {} });
  t.is(cancel.status, 200, JSON.stringify(cancel.body));
  t.is((await waitForRunState(svc, generous.id)).state, 'cancelled', JSON.stringify(await eventsOf(svc, generous.id)));
  // Ended by us, never by the cap: its log, complete now, has no crossing.
  t.false((await eventsOf(svc, generous.id)).some((event) => event.kind === 'cost.cap_exceeded'));
});

test('an agent that outgrows the sandbox memory limit is OOM-killed and the run fails oom_killed', async (t) => {
  const probe = createMemoryCgroup(`probe-${process.pid}`, 64);
  if (!probe.enforced) {
    // CI machines have a writable memory cgroup; elsewhere say plainly that this did not run.
    if (process.env.CI) return t.fail(`no memory cgroup in CI: ${probe.reason}`);
    t.log(`memory limits unavailable here (${probe.reason}): not run`);
    return t.pass();
  }
  removeMemoryCgroup(probe.cgroup);
  const svc = await startTestStack({ env: { SVC_SANDBOX_MEMORY_MIB: '64' } });
  t.teardown(() => svc.stop());
  const hog = (
    await svc.request('POST', '/runs', {
      body: {
        agent: 'shell',
        prompt: 'echo allocating\nexec python3 -c "x = bytearray(512 * 1024 * 1024); print(len(x))"',
      },
    })
  ).body.run;
  const run = await waitForRunState(svc, hog.id);
  t.like(run, { state: 'failed', failureReason: 'oom_killed' });
  const events = await eventsOf(svc, hog.id);
  t.like(
    events.find((event) => event.kind === 'sandbox.started'),
    { payload: { memory: { limitMiB: 64, enforced: true } } },
  );
  t.false(events.some((event) => event.payload?.text === String(512 * 1024 * 1024)));

  // Within the limit the same agent is fine.
  const small = (
    await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'python3 -c "x = bytearray(8 * 1024 * 1024); print(len(x))"' },
    })
  ).body.run;
  t.like(await waitForRunState(svc, small.id), { state: 'succeeded' }, JSON.stringify(await eventsOf(svc, small.id)));
});
