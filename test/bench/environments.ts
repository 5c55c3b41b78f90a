// A repository environment's cost to a run's start, on the bench topology (API and worker
// processes): dispatch → first agent output for a project whose setup takes ~30 s (a sleep and a
// node_modules tree), cold (the build runs) and warm (its kept result mounted), against a project
// without an environment. From the server's own timestamps (the run's createdAt, the event's ts).
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents } from '../support/stack.ts';
import { percentile } from './measure.ts';
import { startBenchTopology, type BenchTopology } from './topology.ts';

export interface EnvironmentStartup {
  runs: number;
  coldMs: number;
  warmMsP50: number;
  noSetupMsP50: number;
  warmMinusNoSetupMs: number;
}

const SETUP = [
  'setup: |',
  '  sleep 30',
  '  for i in $(seq 1 2000); do',
  '    mkdir -p node_modules/p$i && echo "module.exports = $i" > node_modules/p$i/index.js',
  '  done',
  '',
].join('\n');

async function firstOutputMs(bench: BenchTopology, project: string): Promise<number> {
  const dispatched = await bench.api.request('POST', '/runs', {
    body: { agent: 'shell', project, prompt: 'echo first' },
  });
  const runId = dispatched.body.run.id as string;
  const createdAt = dispatched.body.run.createdAt as number;
  const run = await waitFor(
    async () => {
      const { body } = await bench.api.request('GET', `/runs/${runId}`);
      return ['succeeded', 'failed', 'cancelled'].includes(body.run.state) ? body.run : undefined;
    },
    `run ${runId}`,
    300_000,
  );
  if (run.state !== 'succeeded') throw new Error(`run ${runId} ended ${run.state}: ${JSON.stringify(run)}`);
  const output = (await runEvents(bench.api, runId)).find((event) => event.stream === 'stdout');
  if (!output) throw new Error(`run ${runId} printed nothing`);
  return Date.parse(output.ts) - createdAt;
}

export async function measureEnvironmentStartup(runs = 5): Promise<EnvironmentStartup> {
  const github = new GitHubStandIn();
  github.createRepo('bench', 'with-setup', {
    files: { '.gitignore': 'node_modules/\n', 'package-lock.json': '{}\n', '.svc/environment.yaml': SETUP },
  });
  github.createRepo('bench', 'without-setup', { files: { 'package-lock.json': '{}\n' } });
  const forge = new PullRequestsStandIn();
  await forge.start();
  const bench = await startBenchTopology({ SVC_GIT_TOKEN: 'ghp_bench', SVC_GITHUB_API_URL: forge.url });
  try {
    await bench.startWorker();
    const register = async (name: string) =>
      (await bench.api.request('POST', '/projects', { body: { gitUrl: `https://github.com/bench/${name}` } })).body
        .project.id as string;
    const withSetup = await register('with-setup');
    const withoutSetup = await register('without-setup');
    await firstOutputMs(bench, withoutSetup); // warm-up: the first bundle load and sandbox
    const coldMs = await firstOutputMs(bench, withSetup);
    const warm: number[] = [];
    const none: number[] = [];
    // Interleaved: whatever else the machine does weighs on both alike.
    for (let i = 0; i < runs; i++) {
      warm.push(await firstOutputMs(bench, withSetup));
      none.push(await firstOutputMs(bench, withoutSetup));
    }
    const warmMsP50 = percentile(warm, 50);
    const noSetupMsP50 = percentile(none, 50);
    return { runs, coldMs, warmMsP50, noSetupMsP50, warmMinusNoSetupMs: warmMsP50 - noSetupMsP50 };
  } finally {
    await bench.stop();
    await forge.stop();
  }
}
