// The chaos suite: runs and plan-runs on the production topology while the worker, the API and
// Temporal are killed (-9) and PostgreSQL restarted at random moments, under a concurrency limit
// (runs wait for slots through it all) and with a webhook registered. Then every run and plan-run
// must have reached its correct terminal state, none lost, none duplicated: one agent start, one
// push and one PR each, and its post_reap hook delivered, signed. Used by `npm run chaos` (100 runs)
// and, short, by `npm test`.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { verifyWebhook, WEBHOOK_HEADERS } from '../../platform/webhook-signing.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { planFixture } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { request, type TestResponse } from '../support/stack.ts';
import { startTopology, type Topology } from './topology.ts';

export interface ChaosOptions {
  runs: number;
  planRuns: number;
  log?: (line: string) => void;
}

type Expectation = { state: string; failureReason: string | null; pushes: boolean };
interface Dispatched {
  key: string;
  runId: string;
  expect: Expectation;
}

export interface ChaosReport {
  runs: number;
  planRuns: number;
  disruptions: Record<string, number>;
  correct: number;
  problems: string[];
  settleSeconds: number;
  totalSeconds: number;
}

const DISRUPTIONS = ['kill worker', 'kill api', 'kill temporal', 'restart postgres'] as const;

/** A run of each kind, by its index: most succeed (a third with a commit, pushed and PR'd), a few fail. */
function workload(index: number, project: string): { body: Record<string, unknown>; expect: Expectation } {
  const nap = 1 + (index % 3);
  if (index % 5 === 4)
    return {
      body: { agent: 'shell', prompt: `echo started >> starts.log\necho failing\nsleep ${nap}\nexit 3` },
      expect: { state: 'failed', failureReason: 'crashed', pushes: false },
    };
  if (index % 3 === 0)
    return {
      body: {
        agent: 'shell',
        project,
        prompt:
          `echo started >> .git/starts.log\necho ${index} > chaos-${index}.txt\ngit add ` +
          `chaos-${index}.txt\ngit commit -qm "chaos ${index}"\nsleep ${nap}`,
      },
      expect: { state: 'succeeded', failureReason: null, pushes: true },
    };
  return {
    body: { agent: 'shell', prompt: `echo started >> starts.log\nsleep ${nap}\necho done` },
    expect: { state: 'succeeded', failureReason: null, pushes: false },
  };
}

/** A request the driver repeats through any outage, as a careful client would (idempotent by key). */
async function persist(topology: Topology, token: string, method: string, path: string, body?: unknown, key?: string) {
  return waitFor<TestResponse>(
    async () => {
      const response = await request(topology.apiUrl, token, method, path, {
        body,
        ...(key ? { headers: { 'idempotency-key': key } } : {}),
      }).catch(() => undefined);
      return response && response.status < 500 ? response : undefined;
    },
    `${method} ${path} through the chaos`,
    180_000,
  );
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const fixture = await planFixture('chaos', 'planned', ['First', 'Second'], {});
  fixture.github.createRepo('chaos', 'pushed');
  const hooks = await startHookReceiver();
  const topology = await startTopology({
    ...fixture.env,
    SVC_RECONCILE_INTERVAL_MS: '10000',
    SVC_PR_POLL_MIN_MS: '1000',
    SVC_MAX_CONCURRENT_RUNS: '4',
    SVC_WEBHOOK_POLL_MS: '500',
    SVC_WEBHOOK_RETRY_BASE_MS: '1000',
    // The receiver listens on loopback: a private destination the operator names.
    SVC_WEBHOOK_PRIVATE_TARGETS: new URL(hooks.url).host,
  });
  const token = topology.env.SVC_API_TOKEN!;
  const disruptions: Record<string, number> = Object.fromEntries(DISRUPTIONS.map((name) => [name, 0]));
  try {
    await persist(topology, token, 'GET', '/readyz');
    const project = (await persist(topology, token, 'POST', '/projects', { gitUrl: 'https://github.com/chaos/pushed' }))
      .body.project.id as string;
    const planned = (
      await persist(topology, token, 'POST', '/projects', { gitUrl: 'https://github.com/chaos/planned' })
    ).body.project.id as string;
    const webhook = { url: `${hooks.url}/reaped`, hooks: ['post_reap'] };
    const registered = await persist(topology, token, 'POST', '/webhooks', webhook, 'chaos-webhook');
    hooks.secret = registered.body.secret;

    let chaosOn = true;
    const order = [...DISRUPTIONS];
    let chaosFailed: unknown;
    const chaos = (async () => {
      // At least one full cycle, however quickly the work finishes.
      for (let round = 0; chaosOn || round < DISRUPTIONS.length; round++) {
        await new Promise((resolve) => setTimeout(resolve, 2000 + Math.random() * 4000));
        if (!chaosOn && round >= DISRUPTIONS.length) break;
        // Every kind in turn, each cycle in a random order: even a short run meets them all.
        if (round % DISRUPTIONS.length === 0) order.sort(() => Math.random() - 0.5);
        const what = order[round % DISRUPTIONS.length]!;
        disruptions[what]! += 1;
        log(`chaos: ${what}`);
        if (what === 'kill worker') topology.worker.kill();
        else if (what === 'kill api') topology.api.kill();
        else if (what === 'kill temporal') {
          await topology.killTemporal();
          await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 2000));
          // As a process supervisor would: a server slow to come back (a loaded machine) is started again.
          await topology.restartTemporal(log);
        } else {
          topology.postgres.stop();
          await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 2000));
          topology.postgres.start();
        }
      }
    })().catch((error: unknown) => {
      // The disruption itself broke (a server that would not come back): stop here and say so.
      chaosFailed = error;
      chaosOn = false;
    });

    const dispatched: Dispatched[] = [];
    const planRunIds: string[] = [];
    for (let index = 0; index < options.runs; index++) {
      if (chaosFailed) throw chaosFailed;
      const { body, expect } = workload(index, project);
      const key = `chaos-${index}`;
      const response = await persist(topology, token, 'POST', '/runs', body, key);
      if (response.status !== 201) throw new Error(`dispatch ${key}: ${response.status} ${response.text}`);
      dispatched.push({ key, runId: response.body.run.id, expect });
      const every = Math.max(1, Math.floor(options.runs / Math.max(1, options.planRuns)));
      if (index % every === 0 && planRunIds.length < options.planRuns) {
        // Seeds of its own: plan-runs side by side never touch each other's files.
        const seeds = [1, 2].map((part) =>
          fixture.github.createSeed('chaos', 'planned', `Plan ${planRunIds.length} part ${part}`),
        );
        fixture.github.pushAll('chaos', 'planned', `seeds of plan ${planRunIds.length}`);
        const plan = await persist(topology, token, 'POST', '/plan-runs', {
          project: planned,
          agent: 'shell',
          issues: seeds,
          promptTemplate: fixture.template,
        });
        if (plan.status === 201) planRunIds.push(plan.body.planRun.id);
        else log(`plan-run not accepted: ${plan.status} ${plan.text}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // Let the chaos go on while the work finishes, then let everything settle.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    chaosOn = false;
    await chaos;
    if (chaosFailed) throw chaosFailed;
    const settling = Date.now();
    const report = await check(topology, token, dispatched, planRunIds, fixture);
    report.problems.push(...(await checkHooks(hooks, dispatched)));
    return {
      runs: dispatched.length,
      planRuns: planRunIds.length,
      disruptions,
      ...report,
      settleSeconds: Math.round((Date.now() - settling) / 1000),
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    hooks.close();
    fixture.stopReviewer();
    await fixture.forge.stop();
    await topology.stop();
  }
}

async function check(
  topology: Topology,
  token: string,
  dispatched: Dispatched[],
  planRunIds: string[],
  fixture: Awaited<ReturnType<typeof planFixture>>,
): Promise<{ correct: number; problems: string[] }> {
  const problems: string[] = [];
  let correct = 0;
  const dataDir = topology.env.SVC_DATA_DIR!;
  // One deadline for every run together: a stuck run is reported (with what it last looked like),
  // and the topology is still torn down, rather than the test timing out with nothing said.
  const deadline = Date.now() + 300_000;
  for (const run of dispatched) {
    let last: { state?: string; failureReason?: string | null } | undefined;
    const final = await waitFor(
      async () => {
        const response = await request(topology.apiUrl, token, 'GET', `/runs/${run.runId}`).catch(() => undefined);
        last = response?.body?.run ?? last;
        const state = response?.body?.run?.state;
        return ['succeeded', 'failed', 'cancelled'].includes(state) ? response!.body.run : undefined;
      },
      `run ${run.runId} to end`,
      Math.max(1000, deadline - Date.now()),
    ).catch(() => undefined);
    const wrong: string[] = [];
    if (!final) wrong.push(`never reached a terminal state (last seen: ${last ? last.state : 'unreadable'})`);
    else if (final.state !== run.expect.state || final.failureReason !== run.expect.failureReason)
      wrong.push(
        `ended ${final.state}/${final.failureReason}, expected ${run.expect.state}/${run.expect.failureReason}`,
      );
    const workspace = join(dataDir, 'workspaces', run.runId);
    const marker = [join(workspace, '.git', 'starts.log'), join(workspace, 'starts.log')].find((path) =>
      existsSync(path),
    );
    const starts = marker ? readFileSync(marker, 'utf8').trim().split('\n').length : 0;
    if (starts !== 1) wrong.push(`agent started ${starts} times`);
    if (run.expect.pushes && final) {
      const pulls = fixture.forge.pulls.filter((pull) => pull.head === `svc/${run.runId}`).length;
      if (pulls !== 1) wrong.push(`${pulls} pull requests`);
      if (final.commitsAhead !== 1) wrong.push(`${final.commitsAhead} commits pushed`);
    }
    if (wrong.length) problems.push(`${run.key} (${run.runId}): ${wrong.join('; ')}`);
    else correct += 1;
  }
  const listed = (await request(topology.apiUrl, token, 'GET', '/runs?limit=1')).body.total as number;
  const planChildren = planRunIds.length * 2;
  if (listed < dispatched.length || listed > dispatched.length + planChildren * 2)
    problems.push(
      `GET /runs lists ${listed} runs for ${dispatched.length} dispatches and ${planChildren} plan children`,
    );
  for (const planRunId of planRunIds) {
    const plan = await waitFor(
      async () => {
        const body = (await request(topology.apiUrl, token, 'GET', `/plan-runs/${planRunId}`).catch(() => undefined))
          ?.body;
        return body && ['succeeded', 'failed', 'cancelled'].includes(body.planRun.state) ? body : undefined;
      },
      `plan-run ${planRunId} to end`,
      Math.max(1000, deadline - Date.now()),
    ).catch(() => undefined);
    if (!plan) problems.push(`plan-run ${planRunId} never ended`);
    else if (
      plan.planRun.state !== 'succeeded' ||
      plan.children.some((child: { state: string }) => child.state !== 'merged')
    )
      problems.push(`plan-run ${planRunId}: ${plan.planRun.state} ${plan.planRun.failureReason ?? ''}`);
    else correct += 1;
  }
  return { correct, problems };
}

/** A webhook receiver: the run ids of the post_reap deliveries it took, and whether each was signed. */
async function startHookReceiver() {
  const reaped = new Map<string, boolean>();
  const state = { secret: '' };
  const server = createServer((incoming, response) => {
    let body = '';
    incoming.on('data', (chunk) => (body += chunk));
    incoming.on('end', () => {
      const timestamp = Number(incoming.headers[WEBHOOK_HEADERS.timestamp]);
      const signature = String(incoming.headers[WEBHOOK_HEADERS.signature]);
      let runId: string | undefined;
      try {
        runId = (JSON.parse(body) as { run?: { id?: string } }).run?.id;
      } catch {
        runId = undefined; // not a delivery of ours: nothing to count
      }
      if (runId) reaped.set(runId, verifyWebhook(state.secret, timestamp, body, signature));
      response.writeHead(200).end();
    });
  });
  const url = await listenOnLoopback(server);
  return Object.assign(state, { url, reaped, close: () => void closeServer(server) });
}

/** Every run's post_reap hook reached the receiver (at least once: deliveries may repeat), signed. */
async function checkHooks(
  hooks: Awaited<ReturnType<typeof startHookReceiver>>,
  dispatched: Dispatched[],
): Promise<string[]> {
  await waitFor(
    async () => dispatched.every((run) => hooks.reaped.has(run.runId)) || undefined,
    'every post_reap delivered',
    60_000,
  ).catch(() => undefined);
  return dispatched.flatMap((run) =>
    !hooks.reaped.has(run.runId)
      ? [`${run.key} (${run.runId}): its post_reap hook never arrived`]
      : hooks.reaped.get(run.runId)
        ? []
        : [`${run.key} (${run.runId}): its post_reap hook was not signed with the webhook secret`],
  );
}
