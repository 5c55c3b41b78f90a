// Pause instead of cancel at the cost cap (onCapHit: pause): the agent is stopped, the
// workspace kept, and the run waits — across a kill -9 of its worker — for an operator to raise the
// cap from the run's page (its next agent carries on from the workspace, the run's cost adds up) or
// to cancel it.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '../support/browser.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import { runEvents, runStdout, waitForRunState } from '../support/stack.ts';
import { replaceWorker, startApiOnlyStack } from '../support/worker-kill.ts';

// First session: reports $0.60 (over its $0.50 cap) and would go on for a minute. A later session
// finds the first one's file in the workspace, reports $0.30 more and ends.
const PAUSER = [
  'if [ -e SPENT ]; then echo "resumed after $(cat SPENT)";',
  'echo \'{"type":"svc.usage","costUsd":0.3,"tokensInput":50,"tokensOutput":5}\'; echo done;',
  'else echo first-session > SPENT;',
  'echo \'{"type":"svc.usage","costUsd":0.6,"tokensInput":300,"tokensOutput":30}\'; echo reported; sleep 60; echo ' +
    'finished; fi',
].join(' ');
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  ['agents:', '  - name: pauser', `    command: ["bash", "-c", ${JSON.stringify(PAUSER)}]`, '    maxCostUsd: 0.5'].join(
    '\n',
  ),
);

test('a run paused at its cap waits across a worker kill, resumes from its workspace once the cap rises', async (t) => {
  const { environment, stack, api } = await startApiOnlyStack(t, { SVC_AGENTS_FILE: agentsFile });
  let worker = spawnSvc(['worker'], environment.env);
  t.teardown(() => worker.child.kill('SIGKILL'));
  await waitForOutput(worker, /worker: polling/);
  const events = (id: string) => runEvents(api, id);
  const paused = (id: string) =>
    waitFor(
      async () => {
        const run = (await api.request('GET', `/runs/${id}`)).body.run;
        return run.pausedReason ? run : undefined;
      },
      'the run paused at its cap',
      60_000,
    );

  const refused = await api.request('POST', '/runs', { body: { agent: 'pauser', prompt: 'x', onCapHit: 'later' } });
  t.is(refused.status, 400);
  const dispatched = await api.request('POST', '/runs', {
    body: { agent: 'pauser', prompt: 'spend', onCapHit: 'pause' },
  });
  t.is(dispatched.status, 201, JSON.stringify(dispatched.body));
  const id = dispatched.body.run.id;
  const waiting = await paused(id);
  t.like(waiting, { state: 'running', costUsd: 0.6 });
  t.regex(waiting.pausedReason, /\$0\.60\) crossed its cap \(\$0\.50\)/);
  const log = await events(id);
  t.like(
    log.find((event) => event.kind === 'run.paused'),
    { payload: { costUsd: 0.6, maxCostUsd: 0.5, generation: 1 } },
  );
  t.false(
    log.some((event) => event.payload?.text === 'finished'),
    'the agent was stopped at the cap',
  );

  // A cap that is not above the spend, a body that is not a cap: refused, and the run still waits.
  const tooLow = await api.request('POST', `/runs/${id}/resume`, { body: { maxCostUsd: 0.5 } });
  t.is(tooLow.status, 409, JSON.stringify(tooLow.body));
  t.is(tooLow.body.error.code, 'state_transition_error');
  t.is((await api.request('POST', `/runs/${id}/resume`, { body: { maxCostUsd: -1 } })).status, 400);
  t.is((await api.request('POST', `/runs/${id}/resume`, { body: {} })).status, 400);
  t.is((await api.request('POST', `/runs/run_000000000000/resume`, { body: { maxCostUsd: 2 } })).status, 404);

  // The wait is a workflow condition: no worker has to live through it.
  worker = await replaceWorker(t, worker, environment.env);
  await waitForOutput(worker, /worker: polling/);
  t.truthy((await api.request('GET', `/runs/${id}`)).body.run.pausedReason);

  // The operator raises the cap from the run's page.
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto((await stack.setupLink())!);
  await page.waitForURL(`${stack.api!.url}/`);
  await page.goto(`${stack.api!.url}/ui/runs/${id}`);
  const notice = page.getByTestId('run-paused');
  await notice.waitFor();
  t.regex((await notice.textContent()) ?? '', /crossed its cap[\s\S]*spent \$0\.60/);
  await notice.getByLabel('New cap (USD)').fill('2');
  const [resumed] = await Promise.all([
    page.waitForResponse((response) => response.url().endsWith(`/runs/${id}/resume`)),
    notice.getByRole('button', { name: 'Raise the cap and resume' }).click(),
  ]);
  t.is(resumed.status(), 202);
  const done = await waitForRunState(api, id, undefined, 60_000);
  t.like(done, { state: 'succeeded', costUsd: 0.9, tokensInput: 350, tokensOutput: 35, pausedReason: null });
  const stdout = await runStdout(api, id);
  t.true(stdout.includes('resumed after first-session'), "the second session found the first one's workspace");
  const after = await events(id);
  t.like(
    after.find((event) => event.kind === 'run.resumed'),
    { payload: { maxCostUsd: 2, generation: 2 } },
  );
  t.is(after.filter((event) => event.kind === 'sandbox.started').length, 2);
  t.is((await api.request('POST', `/runs/${id}/resume`, { body: { maxCostUsd: 5 } })).status, 409, 'not paused now');

  // A paused run that is cancelled instead ends cancelled, with the cancel's reason.
  const other = (await api.request('POST', '/runs', { body: { agent: 'pauser', prompt: 'again', onCapHit: 'pause' } }))
    .body.run.id;
  await paused(other);
  const cancel = await api.request('POST', `/runs/${other}/cancel`, { body: { reason: 'too dear' } });
  t.is(cancel.status, 200);
  t.like(await waitForRunState(api, other), { state: 'cancelled', costUsd: 0.6, pausedReason: null });
  t.like(
    (await events(other)).find((event) => event.kind === 'state_change' && event.payload.type === 'result'),
    { payload: { state: 'cancelled', reason: 'too dear' } },
  );
});
