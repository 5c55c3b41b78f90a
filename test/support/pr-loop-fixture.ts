// The PR loop's end-to-end scenario, shared by test/runs/pr-loop.test.ts and the restart test: a
// project whose config asks for the CI fixer, review follow-ups and auto-merge, a `pr-fixer` agent
// that does what each round asks, and CI on the GitHub stand-in that passes a head with FIXED.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { GitHubStandIn } from './github-stand-in.ts';
import { spawnSvc, waitForOutput } from './processes.ts';
import { PullRequestsStandIn, type StoredPull } from './pull-requests-stand-in.ts';
import { startApiOnlyStack } from './worker-kill.ts';

export const FIXER = [
  'description: fixes what the PR loop asks',
  'command: ["bash", "-c", "case \\"$SVC_PROMPT\\" in *\\"requested changes\\"*) echo reviewed > REVIEWED;; ' +
    '*) echo fixed > FIXED;; esac; git add -A && git commit -qm \\"svc follow-up\\" && echo round done"]',
  '',
].join('\n');

/** The same fixer, taking its time: a round that is surely still at work when its processes die. */
export const SLOW_FIXER = FIXER.replace('command: ["bash", "-c", "', 'command: ["bash", "-c", "sleep 8; ');

export const CONFIG = [
  'ciFixer:',
  '  enabled: true',
  '  maxRetries: 2',
  '  cooldownMinutes: 0',
  '  role: pr-fixer',
  'pr:',
  '  autoMerge:',
  '    method: squash',
  '    protectedPaths: [deploy]',
  '  followUps:',
  '    role: pr-fixer',
  '    maxRounds: 3',
  '',
].join('\n');

/** CI on the stand-in: a head passes when it has FIXED; the first green head gets a review asking for more. */
export function startCi(github: GitHubStandIn, forge: PullRequestsStandIn, owner: string, name: string) {
  const bare = join(github.root, owner, `${name}.git`);
  const has = (sha: string, file: string) => {
    try {
      execFileSync('git', ['-C', bare, 'cat-file', '-e', `${sha}:${file}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  let reviewed = false;
  const tick = () => {
    for (const pull of forge.pulls.filter((candidate: StoredPull) => candidate.state === 'open')) {
      const sha = forge.headSha(pull);
      if (!sha || forge.checkRuns.has(sha)) continue;
      const green = has(sha, 'FIXED');
      forge.checkRuns.set(sha, [
        {
          name: 'test',
          status: 'completed',
          conclusion: green ? 'success' : 'failure',
          output: { title: green ? 'passed' : 'failed', summary: 'npm test', text: green ? 'ok' : 'FIXED is missing' },
        },
      ]);
      // The reviewer looks at the first green head, in the same moment CI reports it.
      if (green && !reviewed) {
        reviewed = true;
        forge.review(pull.number, 'CHANGES_REQUESTED', 'Please add a REVIEWED file.', [
          { path: 'README.md', body: 'and keep this file' },
        ]);
      }
    }
  };
  const timer = setInterval(tick, 100);
  return { stop: () => clearInterval(timer), has };
}

/** The forge side of a PR loop test: a repository with these files, and its pull requests served. */
export async function loopForge(t: ExecutionContext, name: string, files: Record<string, string>) {
  const github = new GitHubStandIn();
  github.createRepo('acme', name, { files });
  const forge = new PullRequestsStandIn();
  forge.git = github.forgeGit();
  await forge.start();
  t.teardown(() => forge.stop());
  return { github, forge };
}

/** The loop's env: svc's forge token, the stand-in's API, and quick PR looks. */
export const loopEnv = (forge: PullRequestsStandIn) => ({
  SVC_GIT_TOKEN: 'ghp_test',
  SVC_GITHUB_API_URL: forge.url,
  SVC_PR_POLL_MIN_MS: '300',
  SVC_PR_POLL_MAX_MS: '1000',
});

/** An API in this process and one `svc worker` process, on the loop's env. */
export async function loopStack(t: ExecutionContext, forge: PullRequestsStandIn) {
  const { environment, stack, api } = await startApiOnlyStack(t, loopEnv(forge));
  // The in-sandbox finalizer posts its result to the API, which runs in this process.
  environment.env.SVC_API_URL = stack.api!.url;
  const worker = spawnSvc(['worker'], environment.env);
  t.teardown(() => worker.child.kill('SIGKILL'));
  await waitForOutput(worker, /worker: polling/);
  return { environment, stack, api, worker };
}
