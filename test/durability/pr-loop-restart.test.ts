// The PR loop across the loss of every process: on the production topology (Temporal,
// PostgreSQL, an API process, a worker process), Temporal, the API and the worker are killed with
// SIGKILL and PostgreSQL restarted while a CI fix round runs; the loop still fixes the PR, answers
// the review and merges it, each once.
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTopology, type Topology } from '../chaos/topology.ts';
import { CONFIG, SLOW_FIXER, loopEnv, loopForge, startCi } from '../support/pr-loop-fixture.ts';
import { canRunPrivatePostgres } from '../support/private-postgres.ts';
import { waitFor } from '../support/processes.ts';
import { request, runEvents } from '../support/stack.ts';

/** A request repeated through any outage, as a careful client would. */
function through(topology: Topology) {
  const token = topology.env.SVC_API_TOKEN!;
  return (method: string, path: string, body?: unknown) =>
    waitFor(
      async () => {
        const response = await request(topology.apiUrl, token, method, path, { body }).catch(() => undefined);
        return response && response.status < 500 ? response : undefined;
      },
      `${method} ${path}`,
      180_000,
    );
}

test('kill -9 of Temporal, API, worker mid-round, a database restart: PR fixed, reviewed, merged once', async (t) => {
  if (!canRunPrivatePostgres()) {
    if (process.env.CI) return t.fail('CI has PostgreSQL binaries: the topology must run there');
    t.log('no PostgreSQL binaries for the topology: not run');
    return t.pass();
  }
  t.timeout(300_000);
  const { github, forge } = await loopForge(t, 'enduring', {
    '.svc/config.yaml': CONFIG,
    '.svc/agents/pr-fixer.yaml': SLOW_FIXER,
  });
  const ci = startCi(github, forge, 'acme', 'enduring');
  t.teardown(() => ci.stop());
  const topology = await startTopology(loopEnv(forge));
  t.teardown(() => topology.stop());
  const api = through(topology);

  const project = (await api('POST', '/projects', { gitUrl: 'https://github.com/acme/enduring' })).body.project.id;
  const prompt = 'echo work > WORK.md && git add -A && git commit -qm "the work"';
  const runId = (await api('POST', '/runs', { agent: 'shell', project, prompt })).body.run.id;
  const events = () => runEvents({ request: (method, path) => api(method, path) }, runId);
  const round = await waitFor(
    async () => (await events()).find((event) => event.kind === 'pr_loop.follow_up_started')?.payload,
    'the CI fix round',
    120_000,
  );
  // The round is at work (its agent takes 8 s) when everything goes down. Its start is announced
  // just before its workflow starts: until then the API does not know the run (404).
  const roundRun = await waitFor(
    async () => (await api('GET', `/runs/${round.runId}`)).body.run,
    "the round's run",
    30_000,
  );
  t.false(['succeeded', 'failed', 'cancelled'].includes(roundRun.state));

  // Everything at once, mid-round.
  topology.worker.kill();
  topology.api.kill();
  await topology.killTemporal();
  topology.postgres.stop();
  await sleep(1000);
  topology.postgres.start();
  await topology.restartTemporal();

  const merged = await waitFor(
    async () => {
      const run = (await api('GET', `/runs/${runId}`)).body.run;
      return run.prState === 'merged' ? run : undefined;
    },
    'the PR merged by svc after the restarts',
    240_000,
  );
  t.like(merged, { state: 'succeeded', prRounds: 2 });
  t.like(forge.pulls[0], { state: 'closed', merge_method: 'squash' });
  const log = await events();
  t.deepEqual(
    log
      .filter((event) => event.kind === 'pr_loop.follow_up_ended')
      .map((event) => [event.payload.kind, event.payload.state]),
    [
      ['ci_fix', 'succeeded'],
      ['review', 'succeeded'],
    ],
  );
  t.is(log.filter((event) => event.kind === 'pr_loop.merge_requested').length, 1);
  t.is(forge.pulls.length, 1, 'one PR, never a second');
  const main = github.forgeGit().headSha('acme', 'enduring', 'main');
  t.true(ci.has(main, 'FIXED') && ci.has(main, 'REVIEWED'), 'both rounds are merged');
});
