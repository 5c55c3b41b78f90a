// A seeds project for plan-run tests: a plan of three seeds made with the real `sd` CLI, a forge
// stand-in whose open PRs a "reviewer" merges (git merge into main, then the PR marked merged),
// and a shell-agent prompt template steered by switch files the test creates.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubStandIn } from './github-stand-in.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';
import { waitFor } from './processes.ts';
import { startTestStack, type TestStack } from './stack.ts';

export interface PlanFixture {
  github: GitHubStandIn;
  forge: PullRequestsStandIn;
  /** Seeds of the plan, in plan order. */
  seeds: string[];
  planId: string;
  /**
   * Touch `<switches>/fail-<seed>` (fails the child), `slow-<seed>` (the child waits until it is
   * removed), `empty-<seed>` (the child succeeds, changing nothing); `flaky-<seed>` fails once with a
   * provider error.
   */
  switches: string;
  template: string;
  env: Record<string, string>;
  stopReviewer(): void;
}

export async function planFixture(
  owner: string,
  name: string,
  titles = ['First step', 'Second step', 'Third step'],
  options: { reviewer?: boolean } = {},
): Promise<PlanFixture> {
  const github = new GitHubStandIn();
  github.createRepo(owner, name);
  github.sd(owner, name, 'init');
  const seeds = titles.map((title) =>
    github.createSeed(owner, name, title, ['--description', `Details of ${title.toLowerCase()}`]),
  );
  const epic = github.createSeed(owner, name, 'The epic', ['--type', 'epic']);
  github.sd(owner, name, 'plan', 'create', epic);
  const plans = readFileSync(join(github.workdir(owner, name), '.seeds', 'plans.jsonl'), 'utf8')
    .trim()
    .split('\n');
  const planId = (JSON.parse(plans.at(-1)!) as { id: string }).id;
  github.sd(owner, name, 'plan', 'adopt', planId, ...seeds);
  github.pushAll(owner, name, 'seeds');
  // Bound into every sandbox by the operator (SVC_SANDBOX_BINDS, rw) and open to the sandboxes'
  // uids: `flaky-` switches are consumed there, exactly once.
  const switches = join(github.root, 'switches');
  mkdirSync(switches, { recursive: true });
  chmodSync(switches, 0o777);
  const template = [
    'if [ -e {SW}/fail-{seed_id} ]; then echo "failing on purpose"; exit 3; fi',
    'if rmdir {SW}/flaky-{seed_id} 2>/dev/null; then echo \'{"type":"svc.provider_error","message":"overloaded"}\'; ' +
      'exit 1; fi',
    'while [ -e {SW}/slow-{seed_id} ]; do sleep 0.2; done',
    'if [ -e {SW}/empty-{seed_id} ]; then echo "nothing to change for {seed_id}"; exit 0; fi',
    "cat > {seed_id}.md <<'SEED'\n{seed_body}\nSEED",
    'git add {seed_id}.md && git commit -qm "Work on {seed_id}" && echo committed {seed_id}',
  ]
    .join('\n')
    .replaceAll('{SW}', '/switches');
  const forge = new PullRequestsStandIn();
  await forge.start();
  // The reviewer: merges every open PR it sees.
  const reviewer = setInterval(() => {
    if (options.reviewer === false) return;
    const ours = (pull: { owner: string; name: string }) => pull.owner === owner && pull.name === name;
    for (const pull of forge.pulls.filter((candidate) => candidate.state === 'open' && ours(candidate))) {
      github.mergeBranch(owner, name, pull.head);
      forge.merge(pull.number);
    }
  }, 200);
  return {
    github,
    forge,
    seeds,
    planId,
    switches,
    template,
    env: {
      SVC_SANDBOX_BINDS: `${switches}:/switches:rw`,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_PLAN_RUN_MERGE_POLL_MS: '1000',
      SVC_PR_POLL_MIN_MS: '1000',
      SVC_PR_POLL_MAX_MS: '1000',
    },
    stopReviewer: () => clearInterval(reviewer),
  };
}

export function setSwitch(
  fixture: PlanFixture,
  kind: 'fail' | 'slow' | 'flaky' | 'empty',
  seedId: string,
  on = true,
): void {
  const path = join(fixture.switches, `${kind}-${seedId}`);
  if (kind === 'flaky') {
    if (on) mkdirSync(path, { recursive: true });
    return;
  }
  if (on) writeFileSync(path, '');
  else rmSync(path, { force: true });
}

/** The plan-run's detail once it is in one of `states` (by default, any terminal one). */
export async function waitForPlanRunState(
  svc: TestStack,
  id: string,
  states = ['succeeded', 'failed', 'cancelled'],
  timeoutMs = 120_000,
) {
  return waitFor(
    async () => {
      const { body } = await svc.request('GET', `/plan-runs/${id}`);
      return states.includes(body.planRun?.state) ? body : undefined;
    },
    `plan-run ${id} to reach ${states.join('/')}`,
    timeoutMs,
  );
}

/** A plan fixture for owner/name, a stack that sees it (plus `env`), the project registered; stop() ends all. */
export async function startPlanStack(
  owner: string,
  name: string,
  options: { env?: Record<string, string>; titles?: string[]; reviewer?: boolean } = {},
): Promise<{ fixture: PlanFixture; svc: TestStack; project: string; stop(): Promise<void> }> {
  const fixture = await planFixture(owner, name, options.titles, { reviewer: options.reviewer });
  const svc = await startTestStack({ env: { ...fixture.env, ...options.env } });
  const registered = await svc.request('POST', '/projects', {
    body: { gitUrl: `https://github.com/${owner}/${name}` },
  });
  return {
    fixture,
    svc,
    project: registered.body.project.id,
    async stop() {
      fixture.stopReviewer();
      await fixture.forge.stop();
      await svc.stop();
    },
  };
}
