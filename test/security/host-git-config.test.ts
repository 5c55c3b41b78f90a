// Attack: make svc's git on the host obey a configuration that is not svc's. The host is armed as
// an operator's machine may be: git-lfs installed, its filter in the account's global git config,
// and (as a stand-in for anything else an account's config may say) hooks and an fsmonitor that
// run a trap. Then (a) a hostile repository whose default branch names the LFS filter, points
// `.lfsconfig` at a listening HTTP server of the test's and holds LFS pointers, and (b) an agent
// that commits the same to its branch and arms its own repository's config and hooks. svc clones,
// refreshes, cuts workspaces, pushes, reads diffs, continues the agent's branch and runs a PR-loop
// round on it: the server must see no request and the trap must never run.
import test, { type ExecutionContext } from 'ava';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropFilterShield, git, shieldFilters } from '../../platform/host-git.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { eventsOf, hostTrap } from './hostile-agent.ts';

/** The machine's own git config files: the test must leave them as it found them. */
const MACHINE_GIT_CONFIG = ['/etc/gitconfig', join(homedir(), '.gitconfig')];
const readMachineGitConfig = () =>
  MACHINE_GIT_CONFIG.map((file) => (existsSync(file) ? readFileSync(file, 'utf8') : null));

/**
 * Debian's git-lfs, installed when missing (as root, through apt). Its package turns the filter on in
 * /etc/gitconfig: that file is put back as it was, since this test arms only its own global config.
 * Answers why git-lfs cannot be had, or null.
 */
function ensureGitLfs(): string | null {
  if (spawnSync('git', ['lfs', 'version']).status === 0) return null;
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).status !== 0)
    return 'git-lfs is not installed, and apt-get cannot install it here (not root, or no apt)';
  const before = readMachineGitConfig()[0];
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', 'git-lfs'], { stdio: 'ignore', timeout: 600_000 });
  if (install().status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { stdio: 'ignore', timeout: 300_000 });
    install();
  }
  if (before === null) rmSync('/etc/gitconfig', { force: true });
  else writeFileSync('/etc/gitconfig', before);
  return spawnSync('git', ['lfs', 'version']).status === 0 ? null : 'apt-get install git-lfs failed';
}

const lfsProblem = ensureGitLfs();
const machineGitConfig = readMachineGitConfig();

/** An LFS pointer to an object nobody has: checking it out through the LFS filter would fetch it. */
function pointer(content: string): string {
  const oid = createHash('sha256').update(content).digest('hex');
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${content.length}\n`;
}

/** What names the LFS filter, and where LFS would fetch from: `.gitattributes`, `.lfsconfig`. */
const lfsFiles = (server: string, path: string) => ({
  '.gitattributes': '* filter=lfs diff=lfs merge=lfs\n',
  '.lfsconfig': `[lfs]\n\turl = ${server}/${path}\n`,
});

/** Answers a conflict with its base (a PR-loop rebase round) by keeping both sides. */
const RESOLVER = [
  'description: resolves conflicts',
  `command: ${JSON.stringify([
    'bash',
    '-c',
    "git diff --name-only --diff-filter=U | xargs -r sed -i '/^[<=>]\\{7\\}/d'; " +
      'git add -A && git commit -q --no-edit && echo resolved',
  ])}`,
  '',
].join('\n');

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
forge.git = github.forgeGit();
const trap = hostTrap();
const lfsRequests: string[] = [];
const lfsServer = createServer((request, response) => {
  lfsRequests.push(`${request.method} ${request.url}`);
  response.writeHead(404).end();
});
let lfsUrl = '';
let svc: TestStack;
const standInGlobal = process.env.GIT_CONFIG_GLOBAL;

/**
 * The account's global git config, armed: the stand-in's settings, hooks and an fsmonitor that run
 * the trap, and the LFS filter as `git lfs install` writes it.
 */
function armGlobalGitConfig(): string {
  const hooks = join(trap.dir, 'hooks');
  mkdirSync(hooks);
  for (const hook of [
    'post-checkout',
    'post-merge',
    'pre-commit',
    'commit-msg',
    'post-commit',
    'pre-merge-commit',
    'prepare-commit-msg',
    'pre-push',
    'pre-receive',
    'update',
    'post-receive',
    'post-update',
    'reference-transaction',
    'pre-auto-gc',
    'post-rewrite',
    'push-to-checkout',
  ]) {
    writeFileSync(join(hooks, hook), `#!/bin/sh\nexec ${trap.script} ${hook}\n`);
    chmodSync(join(hooks, hook), 0o755);
  }
  const config = join(mkdtempSync(join(tmpdir(), 'svc-armed-')), 'gitconfig');
  writeFileSync(
    config,
    `[include]\n\tpath = ${github.gitConfig}\n[core]\n\thooksPath = ${hooks}\n\tfsmonitor = ${trap.script}\n`,
  );
  execFileSync('git', ['lfs', 'install', '--skip-repo'], {
    cwd: trap.dir,
    env: { ...process.env, GIT_CONFIG_GLOBAL: config },
    stdio: 'ignore',
  });
  return config;
}

const serial = lfsProblem ? test.serial.skip : test.serial;
if (lfsProblem)
  test('git-lfs arms the host', (t) => {
    // Only where it cannot be installed; CI must have it.
    if (process.env.CI) t.fail(lfsProblem);
    else t.log(`skipped: ${lfsProblem}`);
    t.pass();
  });

test.before(async () => {
  if (lfsProblem) return;
  lfsUrl = await listenOnLoopback(lfsServer);
  await forge.start();
  github.createRepo('acme', 'hostile-repo', {
    files: {
      ...lfsFiles(lfsUrl, 'hostile-repo'),
      'asset.bin': pointer('an asset of the repository'),
      'deep/.gitattributes': '*.dat filter=lfs\n',
      'deep/data.dat': pointer('a deeper asset'),
      'app.txt': 'one\n',
    },
  });
  github.createRepo('acme', 'agent-branch', {
    files: {
      'README.md': '# agent-branch\nthe line\n',
      '.svc/config.yaml': 'pr:\n  followUps:\n    role: pr-fixer\n    maxRounds: 2\n',
      '.svc/agents/pr-fixer.yaml': RESOLVER,
    },
  });
  process.env.GIT_CONFIG_GLOBAL = armGlobalGitConfig();
  svc = await startTestStack({
    env: {
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_PR_POLL_MIN_MS: '300',
      SVC_PR_POLL_MAX_MS: '1000',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
  await closeServer(lfsServer);
  if (standInGlobal === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = standInGlobal;
});

/** Each attack starts from a quiet server and an unsprung trap, whatever an earlier one managed. */
function resetTraps(): void {
  lfsRequests.length = 0;
  rmSync(trap.ran, { force: true });
}

/** Nothing reached the LFS server and nothing ran the trap. */
function assertNothingObeyed(t: ExecutionContext, during: string): void {
  t.deepEqual(lfsRequests, [], `svc's git asked the LFS server during ${during}`);
  // Where it ran, from the environment the trap wrote down.
  const where = existsSync(trap.ran) ? readFileSync(trap.ran, 'utf8').match(/^(?:PWD|GIT_DIR)=.*$/gm) : null;
  t.false(existsSync(trap.ran), `a hook or fsmonitor ran on the host during ${during}: ${where?.join(', ')}`);
}

const register = async (name: string) => {
  const response = await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${response.text}`);
  return response.body.project.id as string;
};
const dispatch = async (body: Record<string, unknown>) => {
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', ...body } });
  if (response.status !== 201) throw new Error(`dispatch failed: ${response.status} ${response.text}`);
  return response.body.run.id as string;
};

serial('the armed host really arms git: its own checkout of the hostile repository asks the LFS server', async (t) => {
  // The control: git as the account runs it, outside svc, obeys the armed config. Not synchronous:
  // the LFS server answers from this process.
  const clone = join(mkdtempSync(join(tmpdir(), 'svc-control-')), 'clone');
  await new Promise((resolve) =>
    execFile(
      'git',
      ['clone', '--quiet', 'https://github.com/acme/hostile-repo', clone],
      { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, timeout: 60_000 },
      resolve,
    ),
  );
  t.true(lfsRequests.length > 0, 'the LFS filter fetched from the server named by .lfsconfig');
  t.true(existsSync(trap.ran), "the account's hooks ran");
  resetTraps();
});

serial('a hostile repository: clone, refresh, a workspace cut, push and diff obey nothing of it', async (t) => {
  resetTraps();
  const project = await register('hostile-repo');
  assertNothingObeyed(t, 'the clone');
  const refreshed = await svc.request('POST', `/projects/${project}/refresh`, { body: {} });
  t.is(refreshed.status, 200, refreshed.text);
  assertNothingObeyed(t, 'the refresh');
  const runId = await dispatch({
    project,
    prompt: 'head -1 asset.bin deep/data.dat && echo two >> app.txt && git commit -qam "agent work"',
  });
  const run = await waitForRunState(svc, runId, undefined, 120_000);
  t.like(run, { state: 'succeeded', commitsAhead: 1 });
  const { stdout } = await eventsOf(svc, runId);
  t.true(
    stdout.filter((line) => line === 'version https://git-lfs.github.com/spec/v1').length === 2,
    `the workspace holds the pointers as committed, no filter ran: ${stdout.join('\n')}`,
  );
  assertNothingObeyed(t, "the run's workspace cut and push");
  const diff = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(diff.status, 200, diff.text);
  t.deepEqual(
    diff.body.files.map((file: { path: string }) => file.path),
    ['app.txt'],
  );
  assertNothingObeyed(t, 'the diff');
});

serial("an agent's branch: push, diff, refresh, continuation and a PR-loop round obey nothing of it", async (t) => {
  resetTraps();
  const project = await register('agent-branch');
  const files = { ...lfsFiles(lfsUrl, 'agent'), 'model.bin': pointer('the agent model') };
  const writes = Object.entries(files).map(([path, content]) => `printf '%s' '${content}' > ${path}`);
  const prompt = [
    ...writes,
    'sed -i "s/the line/the agent line/" README.md',
    'git add -A && git commit -qm "agent work"',
    // Armed after the commit: the agent's own git would run all of it.
    `git config core.fsmonitor ${trap.script}`,
    `git config filter.lfs.process ${trap.script} && git config filter.lfs.required true`,
    'mkdir -p .git/hooks && for hook in post-checkout post-merge reference-transaction pre-push; do ' +
      `printf '#!/bin/sh\\n${trap.script}\\n' > .git/hooks/$hook; chmod +x .git/hooks/$hook; done`,
    'echo armed',
  ].join('\n');
  const runId = await dispatch({ project, prompt });
  const run = await waitForRunState(svc, runId, undefined, 120_000);
  t.like(run, { state: 'succeeded', commitsAhead: 1, prState: 'open' });
  const branch = `svc/${runId}`;
  t.truthy(github.git(github.workdir('acme', 'agent-branch'), 'ls-remote', 'origin', branch), 'svc pushed it');
  assertNothingObeyed(t, "the agent's push");

  const diff = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(diff.status, 200, diff.text);
  t.true(diff.body.files.some((file: { path: string }) => file.path === 'model.bin'));
  assertNothingObeyed(t, "the diff of the agent's branch");

  const onBranch = await svc.request('POST', `/projects/${project}/refresh`, { body: { ref: branch } });
  t.is(onBranch.status, 200, onBranch.text);
  const back = await svc.request('POST', `/projects/${project}/refresh`, { body: {} });
  t.is(back.status, 200, back.text);
  assertNothingObeyed(t, "a refresh onto the agent's branch");

  const childId = await dispatch({
    continueFromRunId: runId,
    prompt: 'head -1 model.bin && echo more > more.txt && git add more.txt && git commit -qm more',
  });
  const child = await waitForRunState(svc, childId, undefined, 120_000);
  t.like(child, { state: 'succeeded', cloneKind: 'continue' });
  t.true((await eventsOf(svc, childId)).stdout.includes('version https://git-lfs.github.com/spec/v1'));
  assertNothingObeyed(t, "a continuation of the agent's branch");

  // The base moves into a conflict with the PR: the loop's rebase round merges it on the host.
  github.commit('acme', 'agent-branch', { 'README.md': '# agent-branch\nthe base line\n' }, 'the base moves');
  const round = await waitFor(
    async () => {
      const events = (await eventsOf(svc, runId)).events;
      return events.find((event) => event.kind === 'pr_loop.follow_up_ended')?.payload;
    },
    'the rebase round',
    150_000,
  );
  t.like(round, { kind: 'rebase', state: 'succeeded' });
  t.true(github.forgeGit().mergeable('acme', 'agent-branch', 'main', branch), 'the round resolved the conflict');
  assertNothingObeyed(t, 'a PR-loop round on the agent branch');
});

serial("git in a repository whose config svc did not write obeys none of it, and an agent's is refused", async (t) => {
  resetTraps();
  const dir = mkdtempSync(join(tmpdir(), 'svc-foreign-'));
  const repo = join(dir, 'repo');
  const standIn = { ...process.env, GIT_CONFIG_GLOBAL: github.gitConfig };
  execFileSync('git', ['clone', '--quiet', 'https://github.com/acme/hostile-repo', repo, '--no-checkout'], {
    env: standIn,
  });
  // Written as an agent would write it: filters, hooks, fsmonitor, helpers, an include of more.
  writeFileSync(join(dir, 'more.config'), `[core]\n\tfsmonitor = ${trap.script}\n`);
  for (const [key, value] of [
    ['filter.lfs.process', trap.script],
    ['filter.lfs.smudge', trap.script],
    ['filter.lfs.required', 'true'],
    ['core.hooksPath', join(trap.dir, 'hooks')],
    ['core.fsmonitor', trap.script],
    ['credential.helper', `!${trap.script}`],
    ['include.path', join(dir, 'more.config')],
  ])
    execFileSync('git', ['config', key!, value!], { cwd: repo, env: standIn });
  shieldFilters(join(repo, '.git'));
  await git(['checkout', '--quiet', '--force', '-B', 'main', 'origin/main'], { cwd: repo });
  await git(['status', '--porcelain'], { cwd: repo });
  t.is(readFileSync(join(repo, 'asset.bin'), 'utf8'), pointer('an asset of the repository'));
  dropFilterShield(join(repo, '.git'));
  assertNothingObeyed(t, 'git in a repository armed by someone else');

  if (process.getuid?.() === 0) {
    // A sandbox's uid owns an agent's workspace: git as svc refuses to work in it at all.
    execFileSync('chown', ['-R', '2000123:2000123', repo]);
    const refused = await git(['status'], { cwd: repo }).catch((error: Error) => error.message);
    t.regex(refused, /dubious ownership/);
    assertNothingObeyed(t, 'git in a repository an agent owns');
  } else t.log('not root: the ownership refusal is not tried');
});

serial("the machine's git config is as the test found it", (t) => {
  t.deepEqual(readMachineGitConfig(), machineGitConfig);
});
