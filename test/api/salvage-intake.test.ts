// The salvage envelope is read as it arrives: its bundle decoded to a file chunk by chunk (never
// whole in memory), its other members parsed; a body past the limit stops being read at the limit.
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSalvageEnvelope } from '../../api/services/salvage-intake.ts';

async function* chunks(text: string, size: number) {
  const bytes = Buffer.from(text);
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

const dir = mkdtempSync(join(tmpdir(), 'svc-salvage-intake-'));
const bundle = Buffer.concat([Buffer.from('# v2 git bundle\n'), Buffer.alloc(300_000, 7)]);
const envelope = {
  version: 1,
  trigger: 'push_failed',
  rescueRef: null,
  bundleBase64: bundle.toString('base64'),
  branch: 'svc/run_x',
  baseBranch: 'main',
  notes: ['a "quoted" note', 'ünïcode'],
};

for (const size of [1, 7, 4096, 1 << 20]) {
  test(`the bundle lands on disk intact, whatever the chunking (${size} bytes)`, async (t) => {
    const path = join(dir, `bundle-${size}`);
    const body = JSON.stringify(envelope, null, size === 7 ? 2 : undefined);
    const { envelope: parsed, bundleBytes } = await readSalvageEnvelope(chunks(body, size), path, 1 << 21);
    t.deepEqual(parsed, { ...envelope, bundleBase64: null });
    t.is(bundleBytes, bundle.length);
    t.true(readFileSync(path).equals(bundle));
  });
}

test('a body past the limit is 413 as soon as it gets there; a broken one is 400', async (t) => {
  const body = JSON.stringify(envelope);
  await t.throwsAsync(readSalvageEnvelope(chunks(body, 4096), join(dir, 'too-big'), 100_000), {
    message: /larger than 100000 bytes/,
  });
  for (const broken of ['{"bundleBase64":"@@@@"}', '{"notes":', '[1,2]', '{"a" 1}']) {
    const error = await t.throwsAsync(readSalvageEnvelope(chunks(broken, 3), join(dir, 'broken'), 1000));
    t.is((error as { status?: number }).status, 400, broken);
  }
});
