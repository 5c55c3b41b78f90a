// The per-project lock: writers exclude everyone, readers share; and under concurrent refreshes
// and run dispatches the clone stays intact.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withProjectLock } from '../../platform/project-lock.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

test('an exclusive holder keeps others out; shared holders overlap', async (t) => {
  const lock = join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'p.lock');
  const timeline: string[] = [];
  const hold = (name: string, mode: 'shared' | 'exclusive', ms: number) =>
    withProjectLock(lock, mode, async () => {
      timeline.push(`${name}+`);
      await sleep(ms);
      timeline.push(`${name}-`);
    });
  const writer = hold('w', 'exclusive', 300);
  await sleep(50);
  await Promise.all([hold('r1', 'shared', 200), hold('r2', 'shared', 200)]);
  await writer;
  t.deepEqual(timeline.slice(0, 2), ['w+', 'w-'], 'readers waited for the writer');
  t.deepEqual(timeline.slice(2, 4).sort(), ['r1+', 'r2+'], 'both readers held the lock at once');
});

test('the lock is released when the work throws', async (t) => {
  const lock = join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'p.lock');
  await t.throwsAsync(
    withProjectLock(lock, 'exclusive', async () => Promise.reject(new Error('boom'))),
    { message: 'boom' },
  );
  t.is(await withProjectLock(lock, 'exclusive', async () => 'free again'), 'free again');
});

test('concurrent refreshes and runs on one project all succeed and leave a sound clone', async (t) => {
  const github = new GitHubStandIn();
  github.createRepo('acme', 'busy', { files: { 'data.txt': '0\n' } });
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/busy' } })).body
    .project;

  const work: Promise<unknown>[] = [];
  for (let i = 1; i <= 4; i++) {
    github.commit('acme', 'busy', { 'data.txt': `${i}\n` }, `change ${i}`);
    work.push(svc.request('POST', `/projects/${project.id}/refresh`).then((response) => t.is(response.status, 200)));
    work.push(
      svc
        .request('POST', '/runs', {
          body: {
            agent: 'shell',
            project: project.id,
            prompt: 'git status --porcelain | wc -l; git fsck --no-progress',
          },
        })
        .then(async (response) => {
          t.is(response.status, 201);
          t.is((await waitForRunState(svc, response.body.run.id)).state, 'succeeded');
        }),
    );
  }
  await Promise.all(work);
  const final = await svc.request('POST', `/projects/${project.id}/refresh`);
  t.is(final.body.headSha, github.git(github.workdir('acme', 'busy'), 'rev-parse', 'HEAD'));
  t.is(github.git(project.localPath, 'status', '--porcelain'), '', 'the clone is clean');
  github.git(project.localPath, 'fsck', '--no-progress');
});
