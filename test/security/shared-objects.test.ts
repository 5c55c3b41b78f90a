// Attack: poison the project clone every later run is cut from. A workspace's object files are hard
// links to its project clone's (a run costs its working tree, not the repository's history), so the
// agent of one run holds the very inodes the next run's checkout reads. It tries to rewrite, append
// to, truncate and chmod every one of them, and to take them over; then it does ordinary git work.
// Nothing of the project clone changes, the next run checks out what the repository holds, and the
// first run still commits and pushes.
import test from 'ava';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { treeBytes } from '../../activities/retention/disk-trees.ts';
import { forgeStack } from '../support/forge-stack.ts';
import { waitForRunState, type TestStack } from '../support/stack.ts';
import { eventsOf, probe, reported } from './hostile-agent.ts';

const fixture = forgeStack();
const { github } = fixture;
let svc: TestStack;
/** Two MiB no compression shrinks, committed: the history a workspace must not copy. */
const HISTORY_BYTES = 2 * 1024 * 1024;

test.before(async () => {
  github.createRepo('acme', 'shared', { files: { 'app.txt': 'the repository says this\n' } });
  // History no compression shrinks: a large random blob, committed, then dropped from the tip.
  const random = Buffer.alloc(HISTORY_BYTES);
  for (let at = 0; at < random.length; at += 64) createHash('sha512').update(String(at)).digest().copy(random, at);
  writeFileSync(join(github.workdir('acme', 'shared'), 'history.bin'), random);
  github.commit('acme', 'shared', {}, 'history');
  rmSync(join(github.workdir('acme', 'shared'), 'history.bin'));
  github.commit('acme', 'shared', {}, 'drop it from the tip');
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

/** Every regular file of a git object store, relative to it, with its inode and content digest. */
function objectFiles(objects: string): Map<string, { ino: number; digest: string }> {
  const files = new Map<string, { ino: number; digest: string }>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile())
        files.set(path.slice(objects.length + 1), {
          ino: statSync(path).ino,
          digest: createHash('sha256').update(readFileSync(path)).digest('hex'),
        });
    }
  };
  walk(objects);
  return files;
}

const ATTACK = [
  'objects=$(find .git/objects -type f)',
  `echo "object_files=$(echo "$objects" | grep -c .)"`,
  `echo "owned_by_agent=$(find .git/objects -type f -user "$(id -u)" | grep -c .)"`,
  probe('rewrites', '(for f in $objects; do printf poison > "$f" || exit 1; done)'),
  probe('appends', '(for f in $objects; do printf poison >> "$f" || exit 1; done)'),
  probe('truncates', '(for f in $objects; do truncate -s 0 "$f" || exit 1; done)'),
  probe('chmods', '(for f in $objects; do chmod u+w "$f" || exit 1; done)'),
  probe('chowns', '(for f in $objects; do chown "$(id -u)" "$f" || exit 1; done)'),
  probe('touches', '(for f in $objects; do touch -d 2001-01-01 "$f" || exit 1; done)'),
  // Ordinary git work on top of objects it cannot write: repack, commit.
  'git gc -q --prune=now',
  'echo agent > agent.txt && git add agent.txt && git commit -qm "agent change" && echo committed',
].join('\n');

test.serial("an agent holds its project clone's objects and can change none of them", async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/shared' } })).body
    .project;
  const clone = join(project.localPath as string, '.git', 'objects');
  const before = objectFiles(clone);
  t.true(before.size > 0);

  const dispatch = (prompt: string) => fixture.dispatch(project.id, prompt);

  // First, a run that only sleeps: its workspace is looked at from outside while it runs.
  const quiet = await dispatch('sleep 30');
  await waitForRunState(svc, quiet, ['running']);
  const workspace = join(svc.config.dataDir, 'workspaces', quiet);
  const inWorkspace = objectFiles(join(workspace, '.git', 'objects'));
  const shared = [...before].filter(([path, file]) => inWorkspace.get(path)?.ino === file.ino);
  t.true(shared.length > 0, 'the workspace shares inodes with the project clone');
  t.is(shared.length, before.size, 'every object file of the clone is linked, none copied');
  // What removing the workspace gives back: its working tree, not the 2 MiB of history.
  t.true(treeBytes(workspace) < HISTORY_BYTES / 2, `workspace costs ${treeBytes(workspace)} bytes`);
  for (const [path] of shared) {
    const stats = statSync(join(workspace, '.git', 'objects', path));
    t.is(stats.uid, 0, `${path} stays root's`);
    t.is(stats.mode & 0o777, 0o444, `${path} is read-only, readable by the agent`);
  }
  t.is((await svc.request('POST', `/runs/${quiet}/cancel`, { body: {} })).status, 200);

  const attacker = await dispatch(ATTACK);
  const run = await waitForRunState(svc, attacker, undefined, 120_000);
  const { stdout, everything } = await eventsOf(svc, attacker);
  t.true(Number(reported(stdout, 'object_files')) > 0, stdout.join('\n'));
  t.is(reported(stdout, 'owned_by_agent'), '0');
  for (const attempt of ['rewrites', 'appends', 'truncates', 'chmods', 'chowns', 'touches'])
    t.is(reported(stdout, attempt), 'no', `${attempt}: ${stdout.join('\n')}`);
  t.true(stdout.includes('committed'), everything);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(github.git(`${github.root}/acme/shared.git`, 'show', `svc/${attacker}:agent.txt`).trim(), 'agent');

  const after = objectFiles(clone);
  for (const [path, file] of before) t.is(after.get(path)?.digest, file.digest, `${path} unchanged`);

  const next = await dispatch('cat app.txt');
  t.is((await waitForRunState(svc, next, undefined, 60_000)).state, 'succeeded');
  t.true((await eventsOf(svc, next)).stdout.includes('the repository says this'));
});
