// The run's limits, enforced by svc whatever the runtime: the spend cap (a reported cost above it
// stops the agent mid-stream and cancels the run), the sandbox memory limit (the kernel's OOM kill
// in the run's memory cgroup makes the run fail `oom_killed`; without a setting, a default one),
// and the workspace's size (past it the agent is stopped and the run fails `workspace_too_large`).
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPaths } from '../../platform/config.ts';
import { defaultSandboxMemoryMiB } from '../../platform/sandbox-settings.ts';
import { sandboxFiles } from '../../sandbox/host/files.ts';
import { createMemoryCgroup, removeMemoryCgroup } from '../../sandbox/host/memory-cgroup.ts';
import type { LaunchSpec } from '../../sandbox/spec.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

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

const eventsOf = (svc: TestStack, runId: string) => runEvents(svc, runId);

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

/** Whether this machine lets svc make memory cgroups; says why not, and fails in CI, where it must. */
function memoryCgroupsWork(t: { log(text: string): void; fail(text: string): void; pass(): void }): boolean {
  const probe = createMemoryCgroup(`probe-${process.pid}`, 64);
  if (probe.enforced) {
    removeMemoryCgroup(probe.cgroup);
    return true;
  }
  // CI machines have a writable memory cgroup; elsewhere say plainly that this did not run.
  if (process.env.CI) t.fail(`no memory cgroup in CI: ${probe.reason}`);
  else {
    t.log(`memory limits unavailable here (${probe.reason}): not run`);
    t.pass();
  }
  return false;
}

test('an agent that outgrows the sandbox memory limit is OOM-killed and the run fails oom_killed', async (t) => {
  if (!memoryCgroupsWork(t)) return;
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

test("without SVC_SANDBOX_MEMORY_MIB an agent's sandbox has the default limit; off leaves it unlimited", async (t) => {
  if (!memoryCgroupsWork(t)) return;
  const svc = await startTestStack({ env: { SVC_SANDBOX_MEMORY_MIB: '' } });
  t.teardown(() => svc.stop());
  const expected = defaultSandboxMemoryMiB(svc.config.sandbox.mode);
  t.is(svc.config.sandbox.memoryLimitMiB, expected);
  const run = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo up; sleep 60' } })).body.run;
  await waitFor(async () => (await runStdout(svc, run.id)).includes('up') || undefined, 'the agent to start', 30_000);
  // The kernel's own limit on the cgroup the agent runs in, read while it runs.
  const spec = JSON.parse(
    readFileSync(sandboxFiles(join(dataPaths.sandboxes(svc.config.dataDir), run.id)).spec, 'utf8'),
  ) as LaunchSpec;
  const cgroup = spec.memoryCgroup!;
  const limitFile = join(cgroup.path, cgroup.version === 1 ? 'memory.limit_in_bytes' : 'memory.max');
  t.is(Number(readFileSync(limitFile, 'utf8')), expected * 1024 * 1024);
  t.is((await svc.request('POST', `/runs/${run.id}/cancel`, { body: {} })).status, 200);
  t.is((await waitForRunState(svc, run.id)).state, 'cancelled');
  t.like(
    (await eventsOf(svc, run.id)).find((event) => event.kind === 'sandbox.started'),
    { payload: { memory: { limitMiB: expected, enforced: true } } },
  );

  const unlimited = await startTestStack({ env: { SVC_SANDBOX_MEMORY_MIB: 'off' } });
  t.teardown(() => unlimited.stop());
  const free = (await unlimited.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo fine' } })).body.run;
  t.is((await waitForRunState(unlimited, free.id)).state, 'succeeded');
  const started = (await eventsOf(unlimited, free.id)).find((event) => event.kind === 'sandbox.started');
  t.is(started?.payload.memory, null, 'no limit, and the note says none');
});

test('an agent whose workspace outgrows its limit is stopped and the run fails workspace_too_large', async (t) => {
  const svc = await startTestStack({ env: { SVC_RUN_WORKSPACE_MAX_MIB: '5' } });
  t.teardown(() => svc.stop());
  // 20 MiB that cannot be compressed, then a minute it never gets. The guard may stop the agent
  // while the file is still being written, so only the line printed before it is sure to be there.
  const hog = (
    await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'echo writing; head -c 20971520 /dev/urandom > big; sleep 60; echo finished' },
    })
  ).body.run;
  const run = await waitForRunState(svc, hog.id, undefined, 60_000);
  t.like(run, { state: 'failed', failureReason: 'workspace_too_large' });
  const events = await eventsOf(svc, hog.id);
  const crossing = events.find((event) => event.kind === 'workspace.too_large');
  t.is(crossing?.payload.maxMiB, 5);
  t.true(crossing?.payload.sizeMiB >= 5, JSON.stringify(crossing));
  t.like(
    events.find((event) => event.kind === 'state_change' && event.payload.type === 'result'),
    { payload: { state: 'failed', failureReason: 'workspace_too_large', maxMiB: 5 } },
  );
  t.true(events.some((event) => event.kind === 'log.stdout' && event.payload.text === 'writing'));
  t.false(
    events.some((event) => event.kind === 'log.stdout' && event.payload.text === 'finished'),
    'the agent was stopped mid-sleep',
  );

  // Its sandbox's /tmp is on the same disk: it counts too.
  const elsewhere = (
    await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'head -c 20971520 /dev/urandom > "$TMPDIR/big"; sleep 60; echo finished' },
    })
  ).body.run;
  t.like(await waitForRunState(svc, elsewhere.id, undefined, 60_000), {
    state: 'failed',
    failureReason: 'workspace_too_large',
  });

  // Under the limit: 1 MiB written and a gibibyte-long sparse file, which takes no room.
  const small = (
    await svc.request('POST', '/runs', {
      body: {
        agent: 'shell',
        prompt: 'head -c 1048576 /dev/urandom > small; truncate -s 1G sparse; sleep 5; ls -s sparse; echo done',
      },
    })
  ).body.run;
  t.like(await waitForRunState(svc, small.id), { state: 'succeeded' }, JSON.stringify(await eventsOf(svc, small.id)));
  t.false((await eventsOf(svc, small.id)).some((event) => event.kind === 'workspace.too_large'));
  t.true(existsSync(join(dataPaths.workspaces(svc.config.dataDir), small.id, 'sparse')));
});
