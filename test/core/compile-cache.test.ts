import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { compileCacheDir } from '../../platform/compile-cache.ts';

const scratch = () => mkdtempSync(join(tmpdir(), 'svc-compile-cache-'));

test('the cache directory: under XDG_CACHE_HOME, created private; SVC_COMPILE_CACHE names one or (empty) none', (t) => {
  const home = scratch();
  const dir = compileCacheDir({ XDG_CACHE_HOME: home });
  t.is(dir, join(home, 'svc', 'node-compile-cache'));
  t.is(statSync(dir!).mode & 0o777, 0o700);
  const named = join(scratch(), 'cache');
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: named }), named);
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: '', XDG_CACHE_HOME: home }), null);
});

test('a directory others can write, or a link, is never used: svc would run what it holds', (t) => {
  const open = join(scratch(), 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: open }), null);
  const target = join(scratch(), 'target');
  mkdirSync(target, { mode: 0o700 });
  const link = join(scratch(), 'link');
  symlinkSync(target, link);
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: link }), null);
});

test('a directory under one that others can write (not sticky) is never used; under a sticky one it is', (t) => {
  const open = join(scratch(), 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: join(open, 'cache') }), null, 'another user could rename it away');
  const sticky = join(scratch(), 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  t.is(compileCacheDir({ SVC_COMPILE_CACHE: join(sticky, 'cache') }), join(sticky, 'cache'));
});

/** Whether a process importing one of svc's commands (TypeScript) loaded Node's type stripper. */
function loadsStripper(env: Record<string, string>): boolean {
  const module = join(process.cwd(), 'cli', 'commands', 'version.ts');
  const run = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(module)}); console.log(process.moduleLoadList.some((m) => m.includes('amaro')))`,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env } },
  );
  return JSON.parse(run.stdout) as boolean;
}

test("svc's commands fill the cache; from a warm cache svc's TypeScript is not stripped again", (t) => {
  const home = scratch();
  const svc = spawnSync(process.execPath, ['--no-warnings', join('cli', 'main.ts'), '--version'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, XDG_CACHE_HOME: home },
  });
  t.is(svc.status, 0, svc.stderr);
  const dir = join(home, 'svc', 'node-compile-cache');
  t.true(existsSync(dir) && readdirSync(dir).length > 0, 'the cache holds what the command compiled');
  t.true(loadsStripper({}), 'uncached, the stripper loads');
  t.false(loadsStripper({ NODE_COMPILE_CACHE: dir }), 'cached, it does not');
});
