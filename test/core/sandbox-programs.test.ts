// svc's programs inside a sandbox (sandbox/inside/programs.ts): each one plain JavaScript file with
// the helpers it shares with the others (inside/wire.ts) bundled in once, run by a Node that strips
// nothing; a helper that could not run alone in a sandbox is refused when the bundle is made.
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleProgram, SANDBOX_PROGRAMS, sandboxProgramCode } from '../../sandbox/inside/programs.ts';
import { freePort } from '../support/free-port.ts';

const scratch = () => mkdtempSync(join(tmpdir(), 'svc-programs-'));

/** Runs JavaScript `code` as a file of its own, with no type stripper. */
function runBundle(code: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const file = join(scratch(), 'program.mjs');
  writeFileSync(file, code);
  return spawn(process.execPath, ['--no-warnings', '--no-experimental-strip-types', file, ...args], { env });
}

function ended(child: ReturnType<typeof spawn>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

test('each program is one file: no import of svc, the shared helpers in it once', (t) => {
  for (const program of Object.keys(SANDBOX_PROGRAMS) as (keyof typeof SANDBOX_PROGRAMS)[]) {
    const code = sandboxProgramCode(program);
    t.notRegex(code, /from\s+['"]\.{1,2}\//, `${program} imports nothing relative`);
    t.is(sandboxProgramCode(program), code, 'made once');
  }
  t.is(sandboxProgramCode('init').match(/function splice\(/g)?.length, 1);
  t.is(sandboxProgramCode('door').match(/function splice\(/g)?.length, 1);
});

test("the bundled init opens its loopback ports onto svc's side and runs the agent", async (t) => {
  const dir = scratch();
  const socket = join(dir, 'http.sock');
  const server = createServer((connection) => connection.end('through the proxy socket\n'));
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(() => server.close());
  const port = await freePort();
  const agent = `require('node:net').connect(${port}, '127.0.0.1').pipe(process.stdout)`;
  const listeners = JSON.stringify([{ host: '127.0.0.1', port, socket }]);
  const run = await ended(runBundle(sandboxProgramCode('init'), [listeners, process.execPath, '-e', agent]));
  t.is(run.status, 0, run.stderr);
  t.is(run.stdout, 'through the proxy socket\n');
});

test('the bundled steering relay names its formats', async (t) => {
  const run = await ended(runBundle(sandboxProgramCode('steering'), []));
  t.is(run.status, 2);
  t.regex(run.stderr, /usage: steer\.mjs <claude-stream-json> <command>/);
});

test('helpers are bundled through each other, renamed imports included', (t) => {
  const dir = scratch();
  writeFileSync(join(dir, 'inner.ts'), "export const GREETING: string = 'hello';\n");
  writeFileSync(
    join(dir, 'outer.ts'),
    "import { basename } from 'node:path';\nimport { GREETING } from './inner.ts';\n" +
      'export function greet(path: string): string {\n  return `${GREETING} ${basename(path)}`;\n}\n',
  );
  writeFileSync(
    join(dir, 'entry.ts'),
    "import { greet as hail } from './outer.ts';\nimport { GREETING } from './inner.ts';\n" +
      "process.stdout.write(`${hail('/x/world')} ${GREETING.length}`);\n",
  );
  const code = bundleProgram(join(dir, 'entry.ts'));
  t.is(code.match(/GREETING\s*=\s*'hello'/g)?.length, 1, 'a helper imported twice is in the bundle once');
  const file = join(dir, 'entry.mjs');
  writeFileSync(file, code);
  const run = spawnSync(process.execPath, ['--no-experimental-strip-types', file], { encoding: 'utf8' });
  t.is(run.status, 0, run.stderr);
  t.is(run.stdout, 'hello world 5');
});

test('a helper that could not run alone in a sandbox is refused', (t) => {
  const dir = scratch();
  writeFileSync(join(dir, 'entry.ts'), "import { parse } from './helper.ts';\nparse('a: 1');\n");
  writeFileSync(join(dir, 'helper.ts'), "import { parse } from 'yaml';\nexport { parse };\n");
  t.throws(() => bundleProgram(join(dir, 'entry.ts')), { message: /helper\.ts imports yaml/ });
  writeFileSync(join(dir, 'helper.ts'), 'const parse = () => 1;\nexport { parse };\n');
  t.throws(() => bundleProgram(join(dir, 'entry.ts')), { message: /helper\.ts cannot be bundled/ });
});
