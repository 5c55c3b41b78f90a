// scripts/bootstrap.sh's two installs, serve's (`--omit=dev`) and the tests' (SVC_DEPS=dev): which
// one runs when, switching between them, and nothing when the stamp is current. The real bootstrap
// runs in a copy of the checkout's scripts; npm is a recorder on PATH (a real install of the agents'
// CLIs takes minutes: the README's figures come from a fresh clone), and the stamps are compared by
// the real scripts/install-stamp.ts.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';

const lock = (packages: Record<string, { version: string; dev?: boolean }>) =>
  JSON.stringify({
    name: 'svc',
    lockfileVersion: 3,
    packages: {
      '': { name: 'svc' },
      ...Object.fromEntries(
        Object.entries(packages).map(([name, entry]) => [
          `node_modules/${name}`,
          { ...entry, resolved: `https://registry.example/${name}-${entry.version}.tgz`, integrity: 'sha512-x' },
        ]),
      ),
    },
  });

function checkout() {
  const root = mkdtempSync(join(tmpdir(), 'svc-bootstrap-'));
  mkdirSync(join(root, 'scripts'));
  for (const file of ['bootstrap.sh', 'install-stamp.ts'])
    copyFileSync(resolve('scripts', file), join(root, 'scripts', file));
  const bin = join(root, 'fake-bin');
  mkdirSync(bin);
  // Records its arguments and leaves a node_modules, as an install would.
  writeFileSync(join(bin, 'npm'), `#!/bin/sh\necho "$*" >> "${join(root, 'npm.log')}"\nmkdir -p node_modules\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  mkdirSync(join(root, 'web', 'dist'), { recursive: true });
  return { root, bin };
}

/** Sources bootstrap as scripts/svc (runtime) or scripts/test (dev) do; answers the npm calls it made. */
function bootstrap(at: { root: string; bin: string }, deps: 'runtime' | 'dev'): string[] {
  const log = join(at.root, 'npm.log');
  writeFileSync(log, '');
  // The dashboard counts as built: newer than every source.
  writeFileSync(join(at.root, 'web', 'dist', 'index.html'), '');
  execFileSync('bash', ['-c', `${deps === 'dev' ? 'SVC_DEPS=dev ' : ''}source scripts/bootstrap.sh`], {
    cwd: at.root,
    env: {
      ...process.env,
      SVC_DEPS: '',
      PATH: [at.bin, dirname(process.execPath), process.env.PATH].join(delimiter),
      SVC_TEMPORAL_CLI: '/bin/true',
    },
    stdio: 'pipe',
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

test('serve installs the runtime once, the tests add the rest, and neither repeats while its stamp holds', (t) => {
  const at = checkout();
  writeFileSync(
    join(at.root, 'package-lock.json'),
    lock({ koa: { version: '3.0.0' }, ava: { version: '8.0.0', dev: true } }),
  );
  const [runtime] = bootstrap(at, 'runtime');
  t.regex(runtime ?? '', /^install --omit=dev /);
  t.true(existsSync(join(at.root, 'node_modules', '.svc-runtime-stamp')));
  t.deepEqual(bootstrap(at, 'runtime'), [], 'idempotent');

  const [dev] = bootstrap(at, 'dev');
  t.regex(dev ?? '', /^install --include=dev /, 'a runtime install does not serve the tests');
  t.true(existsSync(join(at.root, 'node_modules', '.svc-lock-stamp')));
  t.false(existsSync(join(at.root, 'node_modules', '.svc-runtime-stamp')));
  t.deepEqual(bootstrap(at, 'dev'), []);
  t.deepEqual(bootstrap(at, 'runtime'), [], 'the full install serves serve too');

  // A package moved to dependencies: the full tree holds it already; a runtime tree would not.
  writeFileSync(join(at.root, 'package-lock.json'), lock({ koa: { version: '3.0.0' }, ava: { version: '8.0.0' } }));
  t.deepEqual(bootstrap(at, 'runtime'), []);
  t.deepEqual(bootstrap(at, 'dev'), []);

  // A version bump: both installs are stale.
  writeFileSync(join(at.root, 'package-lock.json'), lock({ koa: { version: '3.1.0' }, ava: { version: '8.0.0' } }));
  t.regex(bootstrap(at, 'runtime')[0] ?? '', /^install --omit=dev /);
  t.false(existsSync(join(at.root, 'node_modules', '.svc-lock-stamp')), 'the pruned tree is no longer the full one');
  t.regex(bootstrap(at, 'dev')[0] ?? '', /^install --include=dev /);
});

test('a runtime stamp is stale when a package moves out of devDependencies', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stamp-'));
  const before = join(dir, 'before.json');
  const after = join(dir, 'after.json');
  writeFileSync(before, lock({ vite: { version: '8.3.8', dev: true } }));
  writeFileSync(after, lock({ vite: { version: '8.3.8' } }));
  const current = (mode: string, stamp: string, lockfile: string) => {
    try {
      execFileSync(process.execPath, ['--no-warnings', 'scripts/install-stamp.ts', mode, stamp, lockfile], {
        stdio: 'pipe',
      });
      return true;
    } catch {
      return false;
    }
  };
  t.false(current('runtime', before, after));
  t.true(current('dev', before, after));
  t.false(current('dev', join(dir, 'missing.json'), after));
  t.true(current('runtime', after, after));
});
