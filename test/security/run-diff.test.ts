// Attack: make svc obey the agent's repository when it shows the run's diff. The agent arms its
// workspace with every git knob that runs a program on a diff (external diff, textconv and
// filter drivers named by a committed .gitattributes, fsmonitor, hooks) and with links out of
// it; svc reads the live diff from a copy of the object files and the finished one from its own
// repository, so nothing may run, nothing outside may be read, and a huge file stays unread.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyWorkspaceCommits, WorkspaceObjectsError } from '../../activities/git/workspace-objects.ts';
import { waitFor } from '../support/processes.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { hostTrap } from './hostile-agent.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'diffed', { files: { 'app.txt': 'one\n' } });
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

/** Commits a change under attributes naming evil drivers, then arms the repository and waits. */
function armedDiff(script: string, canary: string): string {
  return [
    "printf '* diff=evil filter=evil merge=evil\\n' > .gitattributes",
    'echo two >> app.txt',
    `ln -s ${canary} canary-link`,
    'head -c 60000000 /dev/zero > huge.bin',
    'git add -A && git commit -qm "agent work"',
    `git config diff.external ${script}`,
    `git config diff.evil.textconv ${script}`,
    `git config diff.evil.command ${script}`,
    `git config filter.evil.clean ${script} && git config filter.evil.smudge ${script}`,
    `git config core.fsmonitor ${script}`,
    `git config core.pager ${script}`,
    'mkdir -p .git/evil-hooks && git config core.hooksPath .git/evil-hooks',
    `for hook in post-checkout reference-transaction post-index-change; do printf '#!/bin/sh\\n${script}\\n' > ` +
      `.git/evil-hooks/$hook; chmod +x .git/evil-hooks/$hook; done`,
    `echo ${join(canary, '..')} > .git/objects/info/alternates`,
    'echo armed',
    // The test releases the agent once it has read the live diff.
    'for i in $(seq 1 600); do test -e .git/release && break; sleep 0.2; done',
  ].join('\n');
}

test.serial(
  'an armed workspace runs nothing on the host, live or after the run, and huge files stay unread',
  async (t) => {
    const trap = hostTrap();
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/diffed' } }))
      .body.project.id;
    const runId = (
      await svc.request('POST', '/runs', {
        body: { agent: 'shell', project, prompt: armedDiff(trap.script, trap.canary) },
      })
    ).body.run.id as string;
    const live = await waitFor(
      async () => {
        const response = await svc.request('GET', `/runs/${runId}/diff`);
        return response.status === 200 ? response : undefined;
      },
      'the live diff',
      90_000,
    );
    writeFileSync(join(svc.config.dataDir, 'workspaces', runId, '.git', 'release'), '');
    await waitForRunState(svc, runId, ['succeeded'], 120_000);
    const after = await svc.request('GET', `/runs/${runId}/diff`);
    t.is(after.status, 200, after.text);
    for (const [when, response] of [
      ['live', live],
      ['after', after],
    ] as const) {
      const files = Object.fromEntries(response.body.files.map((file: any) => [file.path, file]));
      t.true(files['app.txt'].patch.includes('+two\n'), `${when}: the patch is git's own, not a driver's`);
      t.is(files['canary-link'].patch, `@@ -0,0 +1 @@\n+${trap.canary}\n\\ No newline at end of file\n`, when);
      t.like(files['huge.bin'], { binary: true, additions: 0 }, `${when}: the huge file is not diffed`);
      t.is(files['huge.bin'].patch, undefined);
      t.true(response.text.length < 64 * 1024, `${when}: the document stays small`);
      t.false(response.text.includes('untouched'), `${when}: the canary's content is never read`);
    }
    t.false(
      existsSync(trap.ran),
      `the agent's program ran on the host: ${existsSync(trap.ran) ? readFileSync(trap.ran, 'utf8') : ''}`,
    );
    t.is(readFileSync(trap.canary, 'utf8'), 'untouched\n');
  },
);

/** A workspace with one commit, in a directory svc would hand over, for the object copy's attacks. */
function workspace(): { root: string; workspace: string; scratch: string } {
  const root = mkdtempSync(join(tmpdir(), 'svc-diff-ws-'));
  const path = join(root, 'ws');
  mkdirSync(path);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: path, encoding: 'utf8' }).trim();
  git('init', '-q');
  writeFileSync(join(path, 'a.txt'), 'a\n');
  git('add', '-A');
  git('-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'a');
  const scratch = join(root, 'scratch');
  mkdirSync(scratch);
  return { root, workspace: path, scratch };
}

test('the object copy follows no link out of the workspace and refuses what is not a plain file', async (t) => {
  const trap = hostTrap();
  const attacks: Record<string, (ws: string) => void> = {
    'a .git that is a link': (ws) => {
      execFileSync('mv', [join(ws, '.git'), join(ws, 'real-git')]);
      symlinkSync(join(ws, 'real-git'), join(ws, '.git'));
    },
    'objects that is a link': (ws) => {
      execFileSync('mv', [join(ws, '.git', 'objects'), join(ws, '.git', 'real-objects')]);
      symlinkSync(join(ws, '.git', 'real-objects'), join(ws, '.git', 'objects'));
    },
    'a loose object that links to a host file': (ws) => {
      mkdirSync(join(ws, '.git', 'objects', 'ab'), { recursive: true });
      symlinkSync(trap.canary, join(ws, '.git', 'objects', 'ab', 'c'.repeat(38)));
    },
    'a pack that is a FIFO': (ws) => {
      execFileSync('mkfifo', [join(ws, '.git', 'objects', 'pack', `pack-${'d'.repeat(40)}.pack`)]);
      writeFileSync(join(ws, '.git', 'objects', 'pack', `pack-${'d'.repeat(40)}.idx`), '');
    },
    'a HEAD that links to a host file': (ws) => {
      execFileSync('rm', [join(ws, '.git', 'HEAD')]);
      symlinkSync(trap.canary, join(ws, '.git', 'HEAD'));
    },
    'a branch ref that links to a host file': (ws) => {
      const ref = execFileSync('git', ['symbolic-ref', 'HEAD'], { cwd: ws, encoding: 'utf8' }).trim();
      execFileSync('rm', [join(ws, '.git', ref)]);
      symlinkSync(trap.canary, join(ws, '.git', ref));
    },
    'a HEAD naming a ref outside refs/heads': (ws) =>
      writeFileSync(join(ws, '.git', 'HEAD'), 'ref: ../../../etc/passwd\n'),
  };
  for (const [name, arm] of Object.entries(attacks)) {
    const { workspace: ws, scratch } = workspace();
    arm(ws);
    const error = await t.throwsAsync(copyWorkspaceCommits(ws, scratch, new Set()), undefined, name);
    t.true(error instanceof WorkspaceObjectsError, `${name}: ${error?.message}`);
  }
  const { workspace: ws, scratch } = workspace();
  t.regex((await copyWorkspaceCommits(ws, scratch, new Set())) ?? '', /^[0-9a-f]{40}$/, 'a plain workspace is read');
  t.is(readFileSync(trap.canary, 'utf8'), 'untouched\n');
});
