// Operator binds never show a sandbox svc's own directories: the data directory, the project clones,
// or the compile cache whose code svc's processes run (an agent writing there would run as svc).
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { clashes } from '../../sandbox/host/bind-policy.ts';

test("a bind of svc's directories, above them, inside them or through a link to them is refused", (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-binds-'));
  const data = join(root, 'data');
  const home = join(root, 'home');
  const cache = join(home, '.cache', 'svc', 'node-compile-cache');
  const tools = join(root, 'tools');
  for (const dir of [data, cache, tools]) mkdirSync(dir, { recursive: true });
  const link = join(root, 'innocent-looking');
  symlinkSync(data, link);
  const env = { NODE_COMPILE_CACHE: cache };
  t.true(clashes(data, [data], env));
  t.true(clashes(join(data, 'sandboxes'), [data], env));
  t.true(clashes(root, [data], env), 'a parent shows it too');
  t.true(clashes(link, [data], env), 'a link is what it points at');
  t.true(clashes(join(home, '.cache'), [data], env), "the compile cache's parent: svc would run what the agent writes");
  t.true(clashes(cache, [data], env));
  t.true(clashes('/', [], env));
  t.false(clashes(tools, [data], env), 'an unrelated directory is allowed');
  t.false(clashes(join(home, '.cache'), [data], {}), 'no compile cache: nothing more to refuse');
});
