// Attack: make svc run the agent's code on the host. The agent commits, then arms its repository
// the way git would honour if svc ran git in the workspace: an ext:: remote with the ext
// transport allowed, fsmonitor, hooks, credential and ssh helpers. svc pushes (and salvages, when
// the forge refuses the push) from its own repository, so none of it may ever run.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeBundle } from '../../activities/git/branch-delivery.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { hostTrap, runAttack } from './hostile-agent.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
const SVC_TOKEN = 'ghp_svcsecrettokenvalue0123456789abcdef';
let svc: TestStack;

test.before(async () => {
  await forge.start();
  for (const name of ['armed', 'refused', 'refused-again'])
    github.createRepo('acme', name, { files: { 'app.txt': 'one\n' } });
  for (const name of ['refused', 'refused-again']) refusePushes(name);
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: SVC_TOKEN, SVC_GITHUB_API_URL: forge.url } });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

/** The forge refuses every push to the repository but the rescue branch: svc then salvages. */
function refusePushes(name: string): void {
  const hook = join(github.root, 'acme', `${name}.git`, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    '#!/bin/sh\nwhile read old new ref; do case "$ref" in *svc/rescue/*) ;; *) echo "remote: fatal: refused" >&2; ' +
      'exit 1;; esac; done\n',
  );
  chmodSync(hook, 0o755);
}

/** Commits, then turns every git knob that would run a program into a call of the host's evil.sh. */
function armedRepository(script: string): string {
  return [
    'echo work >> app.txt && git commit -qam "agent work"',
    `cp ${script} .git/evil.sh 2>/dev/null || printf '#!/bin/sh\\ntouch /tmp/evil-ran-in-sandbox\\n' > .git/evil.sh`,
    'chmod +x .git/evil.sh',
    'git config protocol.ext.allow always',
    `git config remote.origin.url "ext::sh -c ${script}"`,
    `git config remote.origin.pushurl "ext::sh -c ${script}"`,
    `git config core.fsmonitor ${script}`,
    `git config core.sshCommand ${script}`,
    `git config credential.helper "!${script}"`,
    `git config core.hooksPath .git/evil-hooks && mkdir -p .git/evil-hooks && for hook in pre-push post-checkout ` +
      `reference-transaction pre-auto-gc; do printf '#!/bin/sh\\n${script}\\n' > .git/evil-hooks/$hook; chmod +x ` +
      `.git/evil-hooks/$hook; done`,
    `git config uploadpack.packObjectsHook ${script}`,
    `git config gpg.program ${script} && git config commit.gpgSign true`,
    'echo armed',
  ].join('\n');
}

for (const scenario of [
  { name: 'armed', push: 'accepted' },
  { name: 'refused', push: 'refused, so svc salvages' },
]) {
  test.serial(`an armed workspace runs nothing on the host when the push is ${scenario.push}`, async (t) => {
    const trap = hostTrap();
    const project = (
      await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${scenario.name}` } })
    ).body.project.id;
    const { run, stdout, everything } = await runAttack(svc, armedRepository(trap.script), { project });
    t.true(stdout.includes('armed'), stdout.join('\n'));
    t.false(
      existsSync(trap.ran),
      `the agent's program ran on the host: ${existsSync(trap.ran) ? readFileSync(trap.ran, 'utf8') : ''}`,
    );
    t.is(readFileSync(trap.canary, 'utf8'), 'untouched\n');
    t.false(everything.includes(SVC_TOKEN), "svc's forge token appears in the run");
    const bare = join(github.root, 'acme', `${scenario.name}.git`);
    if (scenario.name === 'armed') {
      t.like(run, { state: 'succeeded', commitsAhead: 1 });
      t.is(
        github.git(bare, 'log', '-1', '--format=%s', `svc/${run.id}`),
        'agent work',
        'the commit still reaches the forge, pushed by svc',
      );
    } else {
      t.like(run, { state: 'failed', failureReason: 'finalize_failed', salvageRef: `svc/rescue/${run.id}` });
      t.is(
        github.git(bare, 'log', '-1', '--format=%s', `svc/rescue/${run.id}`),
        'agent work',
        "the work is salvaged from svc's own copy",
      );
      t.true(existsSync(run.salvagePath));
    }
    t.false(github.git(bare, 'config', '--list').includes('ext::'), "the forge's repository is untouched");
  });
}

test.serial("a run's work the forge refused never reaches a later run of the same project", async (t) => {
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/refused-again' } })
  ).body.project.id;
  const first = await runAttack(
    svc,
    'echo "secret-of-the-first-run" > leaked.txt && git add leaked.txt && git commit -qm leak',
    { project },
  );
  t.like(first.run, { state: 'failed', failureReason: 'finalize_failed' });
  const second = await runAttack(
    svc,
    'echo found=$(git cat-file --batch-all-objects --batch 2>/dev/null | grep -c "secret-of-the-first-run")',
    { project },
  );
  t.is(
    second.stdout.find((line) => line.startsWith('found=')),
    'found=0',
    'the workspace holds no object of the earlier run',
  );
});

test('svc takes a bundle only as a plain file: a symlink to a host secret or a FIFO is refused', async (t) => {
  // The finalizer runs with the agent's rights, so what it leaves in the outbox is hostile too.
  const trap = hostTrap();
  const outbox = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
  symlinkSync(trap.canary, join(outbox, 'link.bundle'));
  execFileSync('mkfifo', [join(outbox, 'fifo.bundle')]);
  mkdirSync(join(outbox, 'dir.bundle'));
  for (const name of ['link.bundle', 'fifo.bundle', 'dir.bundle', 'missing.bundle']) {
    const target = join(trap.dir, `${name}.copy`);
    t.truthy(await takeBundle(join(outbox, name), target), name);
    t.false(existsSync(target), `${name} was not copied`);
  }
  writeFileSync(join(outbox, 'plain.bundle'), '# v2 git bundle\n');
  t.is(await takeBundle(join(outbox, 'plain.bundle'), join(trap.dir, 'plain.copy')), null);
  t.is(readFileSync(join(trap.dir, 'plain.copy'), 'utf8'), '# v2 git bundle\n');
  t.is(statSync(join(trap.dir, 'plain.copy')).mode & 0o777, 0o600);
});
