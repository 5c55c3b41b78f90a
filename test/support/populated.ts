// A populated server for contract tests and fuzzing: a project from the forge stand-in (seeds, a
// trigger, a config), runs in every state (succeeded with a merged PR, failed, cancelled, one held
// running) and plan-runs in every end state (succeeded, failed, cancelled). Routes that need an
// existing thing are reached with real ids.
import { createServer } from 'node:http';
import { mintRunToken } from '../../core/run-token.ts';
import { closeServer, listenOnLoopback } from './loopback-server.ts';
import type { DatabaseLeg } from './env.ts';
import { planFixture, setSwitch, type PlanFixture } from './plan-fixture.ts';
import { startTestStack, waitForRunState, type TestStack } from './stack.ts';
import { waitFor } from './processes.ts';

export interface PopulatedIds {
  project: string;
  /** A second project, with no run and no `.svc/`: safe to init and delete. */
  spareProject: string;
  /** A project with a legacy `.svc/defaults.json` to migrate. */
  legacyProject: string;
  /** A repository of the forge stand-in that no project names yet. */
  unregisteredGitUrl: string;
  planId: string;
  seedId: string;
  triggerId: string;
  runs: { succeeded: string; failed: string; cancelled: string; running: string };
  planRuns: { succeeded: string; failed: string; cancelled: string };
  /** The held run's own token (the sandbox callback routes). */
  runToken: string;
  /** A succeeded run of a project with `.svc/preview.yaml`, its preview torn down after it was live. */
  previewRun: string;
  /** A webhook whose receiver's name never resolves: its deliveries keep retrying. */
  webhook: string;
  /** A run paused at its cost cap (onCapHit: pause): it may be resumed once. */
  paused: string;
}

export interface PopulatedStack {
  svc: TestStack;
  fixture: PlanFixture;
  ids: PopulatedIds;
  /** Lets the held run finish and stops everything. */
  stop(): Promise<void>;
}

const HOLD = '/switches/slow-hold-running';

export async function populatedStack(
  leg: DatabaseLeg,
  owner: string,
  env: Record<string, string> = {},
): Promise<PopulatedStack> {
  const fixture = await planFixture(owner, 'app', ['One step', 'Another step']);
  fixture.github.commit(
    owner,
    'app',
    {
      '.svc/config.yaml': 'defaultRole: shell\n',
      // Reports $0.60 over its $0.50 cap (a run dispatched with onCapHit: pause waits there); the
      // session after a raise ends at once.
      '.svc/agents/pauser.yaml': [
        'description: spends past its cap once',
        'command:',
        '  - bash',
        '  - -c',
        '  - |',
        '    [ -e .git/spent ] && exit 0',
        '    touch .git/spent',
        '    echo \'{"type":"svc.usage","costUsd":0.6}\'',
        '    sleep 300',
        'maxCostUsd: 0.5',
        '',
      ].join('\n'),
      // An agent that takes steering mid-run and waits for its switch: the held running run.
      '.svc/agents/holder.yaml': [
        'description: waits until told',
        `command: ["bash", "-c", "while [ -e ${HOLD} ]; do sleep 0.2; done"]`,
        'steering: mid-run',
        '',
      ].join('\n'),
      '.svc/triggers.yaml': '- id: nightly\n  kind: cron\n  cron: "0 3 * * *"\n  role: shell\n  prompt: echo nightly\n',
    },
    'svc config',
  );
  fixture.github.createRepo(owner, 'spare');
  fixture.github.createRepo(owner, 'legacy', { files: { '.svc/defaults.json': '{"defaultRole": "shell"}\n' } });
  fixture.github.createRepo(owner, 'unregistered');
  fixture.github.createRepo(owner, 'previewed', {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 4173\n',
      'server.mjs':
        "import { createServer } from 'node:http';\n" +
        "createServer((_q, s) => s.end('preview')).listen(Number(process.env.PORT), process.env.HOST);\n",
    },
  });
  // A judge for the proxy to reach, so its route answers 200 rather than 501 (not configured).
  const judge = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-verdicts-max-id': '0' }).end(''),
  );
  const judgeUrl = await listenOnLoopback(judge);
  const svc = await startTestStack({
    database: leg,
    env: { SVC_JUDGE_BASE_URL: judgeUrl, SVC_JUDGE_EXPORT_TOKEN: 'judge-token', ...fixture.env, ...env },
  });
  const post = async (path: string, body: unknown) => {
    const response = await svc.request('POST', path, { body });
    if (response.status !== 201 && response.status !== 200) throw new Error(`${path}: ${response.text}`);
    return response.body;
  };
  const webhook = (await post('/webhooks', { url: 'http://receiver.invalid/never', hooks: ['run_started'] })).webhook
    .id as string;
  const project = (await post('/projects', { gitUrl: `https://github.com/${owner}/app` })).project.id as string;
  const spareProject = (await post('/projects', { gitUrl: `https://github.com/${owner}/spare` })).project.id as string;
  const legacyProject = (await post('/projects', { gitUrl: `https://github.com/${owner}/legacy` })).project
    .id as string;
  const previewed = (await post('/projects', { gitUrl: `https://github.com/${owner}/previewed` })).project.id as string;
  const dispatch = async (prompt: string, withProject = true) =>
    (await post('/runs', { agent: 'shell', prompt, ...(withProject ? { project } : {}) })).run.id as string;

  const succeeded = await dispatch('echo work > work.txt && git add work.txt && git commit -qm work');
  const failed = await dispatch('echo failing; exit 3', false);
  const cancelled = await dispatch('sleep 300', false);
  await waitForRunState(svc, cancelled, ['running']);
  await post(`/runs/${cancelled}/cancel`, {});
  setSwitch(fixture, 'slow', 'hold-running');
  const running = (await post('/runs', { agent: 'holder', project, prompt: 'hold' })).run.id as string;
  await waitForRunState(svc, running, ['running']);
  const paused = (await post('/runs', { agent: 'pauser', project, prompt: 'spend', onCapHit: 'pause' })).run
    .id as string;
  await waitFor(
    async () => ((await svc.request('GET', `/runs/${paused}`)).body.run.pausedReason ? true : undefined),
    'the pauser run to pause at its cap',
    60_000,
  );
  const previewRun = (
    await post('/runs', {
      agent: 'shell',
      project: previewed,
      prompt: 'echo x > x.txt && git add x.txt && git commit -qm x',
    })
  ).run.id as string;
  for (const id of [succeeded, failed, cancelled]) await waitForRunState(svc, id);
  await waitFor(
    async () => ((await svc.request('GET', `/runs/${succeeded}`)).body.run.prState === 'merged' ? true : undefined),
    'the succeeded run to have its PR merged',
    60_000,
  );

  await waitFor(
    async () => (await svc.request('GET', `/runs/${previewRun}`)).body.run.previewState === 'live',
    'the preview run to be live',
    60_000,
  );
  // Down again at once: a preview outlives its stack (its supervisor is detached), and a run that
  // had one is all the routes need.
  await post(`/runs/${previewRun}/preview/teardown`, {});

  const planRun = async (issues: string[]) =>
    (await post('/plan-runs', { project, agent: 'shell', issues, promptTemplate: fixture.template })).planRun
      .id as string;
  const planEnd = (id: string) =>
    waitFor(
      async () => {
        const state = (await svc.request('GET', `/plan-runs/${id}`)).body.planRun.state;
        return ['succeeded', 'failed', 'cancelled'].includes(state) ? state : undefined;
      },
      `plan-run ${id} to end`,
      120_000,
    );
  const planSucceeded = await planRun([fixture.seeds[0]!]);
  const failing = fixture.github.createSeed(owner, 'app', 'Failing step');
  const slow = fixture.github.createSeed(owner, 'app', 'Slow step');
  fixture.github.pushAll(owner, 'app', 'more seeds');
  setSwitch(fixture, 'fail', failing);
  setSwitch(fixture, 'slow', slow);
  const planFailed = await planRun([failing]);
  const planCancelled = await planRun([slow]);
  await waitFor(
    async () => ((await svc.request('GET', `/plan-runs/${planCancelled}`)).body.children[0].runId ? true : undefined),
    'the slow plan child to start',
    60_000,
  );
  await post(`/plan-runs/${planCancelled}/cancel`, {});
  for (const id of [planSucceeded, planFailed, planCancelled]) await planEnd(id);
  setSwitch(fixture, 'slow', slow, false);

  return {
    svc,
    fixture,
    ids: {
      project,
      spareProject,
      legacyProject,
      unregisteredGitUrl: `https://github.com/${owner}/unregistered`,
      planId: fixture.planId,
      seedId: fixture.seeds[1]!,
      triggerId: 'nightly',
      runs: { succeeded, failed, cancelled, running },
      planRuns: { succeeded: planSucceeded, failed: planFailed, cancelled: planCancelled },
      runToken: mintRunToken(svc.token, running),
      previewRun,
      webhook,
      paused,
    },
    async stop() {
      setSwitch(fixture, 'slow', 'hold-running', false);
      fixture.stopReviewer();
      await svc.stop();
      await fixture.forge.stop();
      await closeServer(judge);
    },
  };
}
