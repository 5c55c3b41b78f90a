// The worker host's shared supervisor (sandbox/host/supervisor-host.ts): the sandboxes of one
// worker side by side in one process, each stopped alone; it takes only its worker's sandboxes, and
// ends once it supervises nothing and no worker is connected.
import test from 'ava';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { readJsonIfExists, sandboxFiles, writeJsonAtomic } from '../../sandbox/host/files.ts';
import { supervisorHolds } from '../../sandbox/host/local-sandbox.ts';
import { SHARED_LOOKUP_THREADS } from '../../sandbox/network/proxy-limits.ts';
import { superviseOnHost } from '../../sandbox/host/supervisor-host-client.ts';
import { isSameProcessAlive } from '../../platform/processes.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState } from '../support/stack.ts';
import type { AgentRecord, ExitRecord, SupervisorRecord } from '../../sandbox/spec.ts';

const SUPERVISOR = resolve('sandbox/host/supervisor.ts');

test('two runs share one supervisor; cancelling one leaves the other running to its end', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const dispatch = async (prompt: string) =>
    (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;
  const cancelled = await dispatch('echo first up\nsleep 60');
  const kept = await dispatch('echo second up\nsleep 3\necho second done');
  const record = async (id: string) => {
    const path = join(svc.config.dataDir, 'sandboxes', id, 'supervisor.json');
    await waitFor(async () => existsSync(path), `the supervisor of ${id}`);
    return JSON.parse(readFileSync(path, 'utf8')) as { pid: number; shared?: boolean };
  };
  const [first, second] = [await record(cancelled), await record(kept)];
  t.true(first.shared, 'a shared supervisor');
  t.is(first.pid, second.pid, 'the same process for both');
  await waitForRunState(svc, cancelled, ['running']);
  t.is((await svc.request('POST', `/runs/${cancelled}/cancel`, { body: {} })).status, 200);
  t.is((await waitForRunState(svc, cancelled)).state, 'cancelled');
  const run = await waitForRunState(svc, kept);
  t.is(run.state, 'succeeded', 'the neighbour was not stopped with it');
  t.deepEqual((await runStdout(svc, kept)).slice(-2), ['second up', 'second done']);
  t.true(isSameProcessAlive(first.pid, undefined), 'the shared supervisor lives on');
});

test('SVC_SUPERVISOR=per-run gives each sandbox a supervisor process of its own', async (t) => {
  t.throws(() => parseSandboxSettings({ SVC_SUPERVISOR: 'pooled' }), {
    message: /SVC_SUPERVISOR must be shared or per-run/,
  });
  const svc = await startTestStack({ env: { SVC_SUPERVISOR: 'per-run' } });
  t.teardown(() => svc.stop());
  const records = [];
  for (const prompt of ['echo one', 'echo two']) {
    const id = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;
    t.is((await waitForRunState(svc, id)).state, 'succeeded');
    records.push(JSON.parse(readFileSync(join(svc.config.dataDir, 'sandboxes', id, 'supervisor.json'), 'utf8')));
  }
  t.falsy(records[0].shared);
  t.not(records[0].pid, records[1].pid);
  t.false(isSameProcessAlive(records[0].pid, records[0].startTime), 'each ended with its sandbox');
});

/** The host started by hand, as a worker starts it (`prefix`: a command to run it under). */
function startHost(dataDir: string, prefix: string[] = [], threads = SHARED_LOOKUP_THREADS) {
  const socket = join(dataDir, 'host.sock');
  const argv = [...prefix, process.execPath, '--no-warnings', SUPERVISOR, '--host', socket, join(dataDir, 'sandboxes')];
  const env = { ...process.env, UV_THREADPOOL_SIZE: String(threads) };
  const host = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', env });
  const exited = once(host, 'exit');
  return { socket, host, exited };
}

/** A worker's connection to a host: one request a line, the answers in order. */
async function connectWorker(socket: string) {
  await waitFor(async () => existsSync(socket), 'the host to listen');
  const worker = connect(socket);
  await once(worker, 'connect');
  const answers: unknown[] = [];
  worker.on('data', (chunk) =>
    answers.push(
      ...chunk
        .toString()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ),
  );
  return {
    worker,
    async ask(dir: string) {
      const before = answers.length;
      worker.write(`${JSON.stringify({ supervise: dir })}\n`);
      await waitFor(async () => answers.length > before, 'an answer');
      return answers[before];
    },
  };
}

/** A sandbox directory with its launch spec, as startSandbox writes it. */
function sandbox(dataDir: string, name: string, argv: string[]) {
  const dir = join(dataDir, 'sandboxes', name);
  mkdirSync(dir, { recursive: true });
  writeJsonAtomic(join(dir, 'launch.json'), { argv, cwd: dir, env: { PATH: process.env.PATH! }, stdin: null });
  return sandboxFiles(dir);
}

test('a host takes no more sandboxes than leave each its own lookup threads', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-host-'));
  // 8 threads kept for the host, 4 for each sandbox: 12 threads hold one sandbox.
  const { socket, host } = startHost(dataDir, [], 12);
  t.teardown(() => host.kill('SIGKILL'));
  const { worker, ask } = await connectWorker(socket);
  t.teardown(() => worker.destroy());
  const first = sandbox(dataDir, 'run_first', ['sleep', '30']);
  t.like(await ask(first.dir), { pid: host.pid });
  t.deepEqual(await ask(sandbox(dataDir, 'run_second', ['true']).dir), { full: true });
  const agent = await waitFor(async () => readJsonIfExists<AgentRecord>(first.agent), 'the agent');
  process.kill(-agent.pid, 'SIGKILL');
});

test('a sandbox whose records fail ends alone, recorded; its neighbour runs; the host lives on', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-host-'));
  const { socket, host } = startHost(dataDir);
  t.teardown(() => host.kill('SIGKILL'));
  const { worker, ask } = await connectWorker(socket);
  t.teardown(() => worker.destroy());
  // The neighbour first, running while its neighbour breaks.
  const healthy = sandbox(dataDir, 'run_healthy', ['bash', '-c', 'sleep 2; echo fine']);
  t.deepEqual(await ask(healthy.dir), { pid: host.pid });
  // Its agent record cannot be written (a directory is in the way): as a full disk would fail it.
  const broken = sandbox(dataDir, 'run_broken', ['sleep', '30']);
  mkdirSync(broken.agent);
  t.deepEqual(await ask(broken.dir), { pid: host.pid });
  await waitFor(async () => existsSync(broken.released), 'the broken sandbox let go');
  const exit = readJsonIfExists<ExitRecord>(broken.exit)!;
  t.is(exit.spawnError?.code, 'SUPERVISOR', JSON.stringify(exit));
  t.is(exit.signal, 'SIGTERM', 'let go once its agent was stopped, not before');
  t.regex(readFileSync(broken.supervisorLog, 'utf8'), /EISDIR|illegal operation on a directory/);
  t.false(existsSync(healthy.exit), 'the neighbour still runs');
  await waitFor(async () => existsSync(healthy.released), 'the healthy sandbox ended');
  t.like(readJsonIfExists<ExitRecord>(healthy.exit), { exitCode: 0, spawnError: null });
  t.is(readFileSync(healthy.stdout, 'utf8'), 'fine\n');
  t.like(readJsonIfExists<SupervisorRecord>(healthy.supervisor), { pid: host.pid, shared: true });
  t.false(supervisorHolds(healthy), 'released: the directory may be moved aside');
  t.is(host.exitCode, null);
  const recorded = readFileSync(healthy.exit, 'utf8');
  t.deepEqual(await ask(healthy.dir), { pid: host.pid }, 'asked again');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(readFileSync(healthy.stdout, 'utf8'), 'fine\n', 'claimed already: nothing started again');
  t.is(readFileSync(healthy.exit, 'utf8'), recorded);
});

test('a host past its descriptors with every sandbox at its worst answers full: the next one takes it', async (t) => {
  // Not root (root raises the limit first): nobody, with a limit that fits one sandbox.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-host-'));
  mkdirSync(join(dataDir, 'sandboxes'));
  chownSync(dataDir, 65534, 65534);
  chownSync(join(dataDir, 'sandboxes'), 65534, 65534);
  const limit = 256 + 2 * 256 + 16 + 100; // the host's own, one sandbox, not a second
  const { socket, host } = startHost(dataDir, [
    'prlimit',
    `--nofile=${limit}:${limit}`,
    '--',
    'setpriv',
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
  ]);
  t.teardown(() => host.kill('SIGKILL'));
  const { worker, ask } = await connectWorker(socket);
  t.teardown(() => worker.destroy());
  const first = sandbox(dataDir, 'run_first', ['sleep', '30']);
  const second = sandbox(dataDir, 'run_second', ['sleep', '30']);
  for (const files of [first, second]) for (const path of [files.dir, files.spec]) chownSync(path, 65534, 65534);
  t.like(await ask(first.dir), { pid: host.pid });
  await waitFor(async () => existsSync(first.agent), 'the first agent');
  t.deepEqual(await ask(second.dir), { full: true });
  t.false(existsSync(second.claim), 'nothing claimed');
  // The worker's side then asks the next shared supervisor, which it starts.
  const next = await superviseOnHost(
    { program: SUPERVISOR, socket, sandboxes: join(dataDir, 'sandboxes') },
    second.dir,
  );
  t.teardown(() => process.kill(next, 'SIGKILL'));
  t.not(next, host.pid);
  t.true(existsSync(join(dataDir, 'host-1.sock')));
  t.like(readJsonIfExists<SupervisorRecord>(second.supervisor), { pid: next, shared: true });
  for (const files of [first, second]) {
    const agent = await waitFor(async () => readJsonIfExists<AgentRecord>(files.agent), 'the agent');
    process.kill(-agent.pid, 'SIGKILL');
  }
});

test('the host takes only sandboxes of its own directory, and ends once idle with no worker', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-host-'));
  mkdirSync(join(dataDir, 'sandboxes'));
  const { socket, host, exited } = startHost(dataDir);
  t.teardown(() => host.kill('SIGKILL'));
  await waitFor(async () => existsSync(socket), 'the host to listen');
  const worker = connect(socket);
  await once(worker, 'connect');
  const answers: string[] = [];
  worker.on('data', (chunk) => answers.push(...chunk.toString().split('\n').filter(Boolean)));
  const elsewhere = mkdtempSync(join(tmpdir(), 'svc-elsewhere-'));
  for (const dir of [elsewhere, join(dataDir, 'sandboxes', '..', 'programs'), 'sandboxes/relative'])
    worker.write(`${JSON.stringify({ supervise: dir })}\n`);
  worker.write('not json\n');
  await waitFor(async () => answers.length === 4, 'four answers');
  t.deepEqual(
    answers.map((line) => JSON.parse(line)),
    Array(4).fill({ error: 'not a sandbox directory of this host' }),
  );
  t.false(existsSync(join(elsewhere, 'claim')), 'nothing claimed outside');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.is(host.exitCode, null, 'a host with its worker connected stays');
  worker.destroy();
  const [code] = await exited;
  t.is(code, 0, 'idle and alone, it ends');
  t.false(existsSync(socket), 'and leaves no socket behind');
});

test('a host that will not start is not waited for again at once: sandboxes get their own supervisors', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-host-'));
  const program = join(dataDir, 'exits.mjs');
  writeFileSync(program, 'process.exit(0);\n');
  const host = { program, socket: join(dataDir, 'host.sock'), sandboxes: join(dataDir, 'sandboxes') };
  await t.throwsAsync(superviseOnHost(host, join(host.sandboxes, 'run_a')), { message: /did not start$/ });
  const started = performance.now();
  await t.throwsAsync(superviseOnHost(host, join(host.sandboxes, 'run_b')), { message: /a moment ago/ });
  t.true(performance.now() - started < 1000, 'answered at once, not after another start');
});
