// The walk that measures a run's workspace and the data directory's areas (platform/disk-usage.ts),
// against `du` on real trees: allocated blocks (a sparse file costs what it holds), each inode once,
// no link followed; in slices that resume where the last stopped; cut at its ceilings.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageWalk } from '../../platform/disk-usage.ts';

const MiB = 1024 * 1024;

/** What `du` says the tree allocates, in bytes (hard links once, links not followed). */
function du(path: string): number {
  return Number(execFileSync('du', ['-s', '-B1', path], { encoding: 'utf8' }).split('\t')[0]);
}

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-usage-'));
  writeFileSync(join(root, 'random'), randomBytes(3 * MiB));
  linkSync(join(root, 'random'), join(root, 'random-again'));
  // A gibibyte long, nothing written: it takes no room.
  writeFileSync(join(root, 'sparse'), '');
  truncateSync(join(root, 'sparse'), 1024 * MiB);
  symlinkSync('/usr', join(root, 'usr'));
  for (let dir = 0; dir < 6; dir++) {
    const path = join(root, 'a', `d${dir}`, 'deeper');
    mkdirSync(path, { recursive: true });
    for (let file = 0; file < 50; file++) writeFileSync(join(path, `f${file}`), randomBytes(100 + file * 97));
  }
  return root;
}

test('counts what du counts: blocks, not lengths; a hard link once; a symbolic link not followed', (t) => {
  const root = tree();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const walk = new UsageWalk(root).finish();
  t.true(walk.done);
  t.is(walk.cut, null);
  t.is(walk.bytes, du(root));
  t.true(walk.bytes < 5 * MiB, 'the sparse gibibyte and the second name of the same file cost nothing');
  t.is(walk.entries, 1 + 5 + 6 * (2 + 50), 'the root, its five entries, and each d*/ with its deeper/ and files');
});

test('walks in slices that resume where the last one stopped, to the same total', (t) => {
  const root = tree();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const walk = new UsageWalk(root);
  let slices = 0;
  while (!walk.step(0)) slices++;
  t.true(slices > 10, `${slices} slices: a zero budget still makes progress, a few entries at a time`);
  t.is(walk.bytes, du(root));
});

test('stops at its ceilings: past the bytes asked about, past the entries allowed', (t) => {
  const root = tree();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const over = new UsageWalk(root, { stopAboveBytes: MiB }).finish();
  t.like(over, { done: true, cut: 'bytes' });
  t.true(over.bytes > MiB);
  const many = new UsageWalk(root, { maxEntries: 100 }).finish();
  t.like(many, { done: true, cut: 'entries', entries: 101 });
  const within = new UsageWalk(root, { stopAboveBytes: 64 * MiB, maxEntries: 10_000 }).finish();
  t.like(within, { done: true, cut: null });
});

test('several trees add up, a file linked into two of them counted once; a missing one is empty', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-usage-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'workspace'));
  mkdirSync(join(root, 'sandbox'));
  writeFileSync(join(root, 'workspace', 'data'), randomBytes(2 * MiB));
  linkSync(join(root, 'workspace', 'data'), join(root, 'sandbox', 'same-data'));
  writeFileSync(join(root, 'sandbox', 'other'), randomBytes(MiB));
  const trees = [join(root, 'workspace'), join(root, 'sandbox'), join(root, 'gone')];
  const walk = new UsageWalk(trees).finish();
  const total = Number(
    execFileSync('du', ['-s', '-c', '-B1', ...trees.slice(0, 2)], { encoding: 'utf8' })
      .split('\n')
      .at(-2)!
      .split('\t')[0],
  );
  t.is(walk.bytes, total);
  t.true(walk.bytes < 4 * MiB, 'the linked file once');
});

test('a missing tree is empty; a file is its own blocks', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-usage-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  t.like(new UsageWalk(join(root, 'nothing')).finish(), { done: true, bytes: 0, entries: 0 });
  writeFileSync(join(root, 'one'), randomBytes(MiB));
  t.is(new UsageWalk(join(root, 'one')).finish().bytes, du(join(root, 'one')));
});
