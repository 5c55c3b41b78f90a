// The free-space floor under which no run starts (platform/disk-space.ts), on this machine's real
// filesystem: a floor above its size is always short, a floor of nothing never, and either part
// (MiB or percent) alone is enough to refuse.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  belowFloor,
  describeFloor,
  describeFreeSpace,
  diskShortageWatch,
  formatBytes,
  freeSpace,
} from '../../platform/disk-space.ts';

test('the free space of a path not made yet is its nearest existing parent', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-space-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const space = freeSpace(join(dir, 'not', 'yet'));
  t.is(space.path, dir);
  t.true(space.freeBytes > 0 && space.freeBytes <= space.totalBytes);
});

test('either part of the floor refuses; 0 turns a part off', (t) => {
  const space = { path: '/', freeBytes: 3 * 1024 ** 3, totalBytes: 100 * 1024 ** 3 };
  t.false(belowFloor(space, { minFreeMiB: 2048, minFreePercent: 1 }));
  t.true(belowFloor(space, { minFreeMiB: 4096, minFreePercent: 1 }), '3 GiB is below 4096 MiB');
  t.true(belowFloor(space, { minFreeMiB: 2048, minFreePercent: 5 }), '3 % is below 5 %');
  t.false(belowFloor(space, { minFreeMiB: 0, minFreePercent: 0 }));
  t.is(describeFreeSpace(space), '3.0 GiB free of 100 GiB (3.0 %)');
  t.is(
    describeFloor({ minFreeMiB: 2048, minFreePercent: 1 }),
    '2048 MiB (SVC_DISK_MIN_FREE_MIB) or 1 % (SVC_DISK_MIN_FREE_PERCENT)',
  );
  t.is(describeFloor({ minFreeMiB: 0, minFreePercent: 2.5 }), '2.5 % (SVC_DISK_MIN_FREE_PERCENT)');
  t.is(formatBytes(512), '512 bytes');
  t.is(formatBytes(1536 * 1024), '1.5 MiB');
});

test('the watch answers the shortage of the real disk, and nothing when the floor is off', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-space-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const size = freeSpace(dir).totalBytes / 1024 ** 2;
  const short = diskShortageWatch(dir, { minFreeMiB: Math.ceil(size) + 1, minFreePercent: 0 })();
  t.is(short?.path, dir);
  t.is(diskShortageWatch(dir, { minFreeMiB: 1, minFreePercent: 0 })(), null);
  t.is(diskShortageWatch(dir, { minFreeMiB: 0, minFreePercent: 0 })(), null);
  // A floor above what any disk has free, asked twice within the cache: the same answer, one statfs.
  const watch = diskShortageWatch(dir, { minFreeMiB: 0, minFreePercent: 99.99 }, 60_000);
  t.truthy(watch());
  t.is(watch(), watch());
});
