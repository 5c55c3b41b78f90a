// The run's gateway (Kubernetes backend) on its own, driven as a hostile pod would drive it: a cut
// upload is never swapped in, two uploads of one part do not race, a sparse file cannot unpack past
// the part's bound, a channel named after an object's property is refused without a crash, and a
// download is framed to its end.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { END_FRAME, FrameDecoder, framed } from '../../sandbox/backends/kubernetes/pod-frames.ts';
import { startPodGateway } from '../../sandbox/backends/kubernetes/pod-gateway.ts';

const RUN_UID = 4242;

async function gateway(t: ExecutionContext, maxBytes = 1024 * 1024) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-gateway-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'original.txt'), 'original\n');
  chownSync(workspace, RUN_UID, RUN_UID);
  chownSync(join(workspace, 'original.txt'), RUN_UID, RUN_UID);
  const spec = {
    bind: '127.0.0.1',
    ports: { first: 41000, last: 41999 },
    token: 'run-token',
    socketDir: join(dir, 'net'),
    parts: { workspace: { dir: workspace, in: true, out: true } },
    hostId: RUN_UID,
    maxBytes,
  };
  const { port, server } = await startPodGateway(spec, join(dir, 'gateway.json'));
  t.teardown(() => server.close());
  return { dir, workspace, port };
}

/** One connection: the preamble, then `body`; answers everything the gateway sent back. */
function exchange(port: number, preamble: string, body: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${preamble}\n`);
      socket.end(body);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

function tarOf(files: Record<string, string>, extra: string[] = []): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'svc-gateway-src-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return execFileSync('tar', ['-c', ...extra, '-C', dir, '.'], { maxBuffer: 1 << 28 });
}

test('a whole upload is swapped in; a cut one (no end frame) is refused and changes nothing', async (t) => {
  const { workspace, port } = await gateway(t);
  const archive = tarOf({ 'new.txt': 'new\n' });
  const cut = await exchange(port, 'SVC1 run-token out:workspace', framed(archive));
  t.regex(cut.toString(), /^FAILED .*cut before its end/);
  t.true(existsSync(join(workspace, 'original.txt')), 'the old copy stays');
  t.false(existsSync(join(workspace, 'new.txt')));
  const whole = await exchange(port, 'SVC1 run-token out:workspace', Buffer.concat([framed(archive), END_FRAME]));
  t.is(whole.toString(), 'OK\n');
  t.is(readFileSync(join(workspace, 'new.txt'), 'utf8'), 'new\n');
  t.false(existsSync(join(workspace, 'original.txt')), 'the hand-back replaces the part');
});

test('a download is framed and ends with its end frame', async (t) => {
  const { port } = await gateway(t);
  const answer = await exchange(port, 'SVC1 run-token in:workspace');
  const decoder = new FrameDecoder();
  const payload: Buffer[] = [];
  decoder.on('data', (chunk: Buffer) => payload.push(chunk));
  await new Promise<void>((resolve, reject) => {
    decoder.once('error', reject);
    decoder.once('finish', resolve);
    decoder.end(answer);
  });
  t.true(decoder.complete);
  const listing = execFileSync('tar', ['-t'], { input: Buffer.concat(payload) }).toString();
  t.true(listing.includes('./original.txt'), listing);
});

test('a sparse file that would unpack past the bound fails the upload', async (t) => {
  const { dir, workspace, port } = await gateway(t, 1024 * 1024);
  const src = mkdtempSync(join(tmpdir(), 'svc-gateway-sparse-'));
  execFileSync('truncate', ['-s', '512M', join(src, 'huge')]);
  const archive = execFileSync('tar', ['-c', '--sparse', '-C', src, '.']);
  t.true(archive.length < 64 * 1024, 'the archive itself is small');
  const answer = await exchange(port, 'SVC1 run-token out:workspace', Buffer.concat([framed(archive), END_FRAME]));
  t.regex(answer.toString(), /^FAILED/);
  t.true(existsSync(join(workspace, 'original.txt')));
  t.deepEqual(
    execFileSync('ls', [dir])
      .toString()
      .split('\n')
      .filter((name) => name.includes('incoming')),
    [],
    'nothing left half-unpacked',
  );
});

test('two uploads of one part at once: the second is refused, the first lands', async (t) => {
  const { workspace, port } = await gateway(t);
  const archive = tarOf({ 'first.txt': 'first\n' });
  // The first holds its part open (no end frame yet) while the second arrives.
  const first = connect(port, '127.0.0.1');
  await new Promise((resolve) => first.once('connect', resolve));
  first.write('SVC1 run-token out:workspace\n');
  first.write(framed(archive));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const second = await exchange(port, 'SVC1 run-token out:workspace', Buffer.concat([framed(archive), END_FRAME]));
  t.is(second.toString(), '', 'the second connection is closed unanswered');
  const answer = new Promise<string>((resolve) => {
    let text = '';
    first.on('data', (chunk: Buffer) => (text += chunk));
    first.on('close', () => resolve(text));
  });
  first.end(END_FRAME);
  t.is(await answer, 'OK\n');
  t.is(readFileSync(join(workspace, 'first.txt'), 'utf8'), 'first\n');
});

test('channels named after object properties, a wrong token, an unknown part: closed, the gateway lives', async (t) => {
  const { port } = await gateway(t);
  for (const preamble of [
    'SVC1 run-token toString',
    'SVC1 run-token constructor',
    'SVC1 run-token out:__proto__',
    'SVC1 wrong-token in:workspace',
    'SVC1 run-token in:home',
  ])
    t.is((await exchange(port, preamble)).length, 0, preamble);
  t.true((await exchange(port, 'SVC1 run-token in:workspace')).length > 0, 'still serving');
});
