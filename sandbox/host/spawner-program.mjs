// The worker's spawner (sandbox/host/spawner.ts): a small process that starts detached
// processes for it, so that each start forks this process and not the worker. One JSON request a
// line on stdin ({argv, env, cwd}: the worker's own), one answer a line on stdout ({pid} or {error}), in order. It ends with its
// input, when the worker that started it goes; what it started lives on in sessions of its own.
// Plain JavaScript on purpose: no type stripper, nothing loaded but node: modules.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  try {
    const { argv, env, cwd } = JSON.parse(line);
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((arg) => typeof arg === 'string'))
      return answer({ error: 'argv must be a non-empty list of strings' });
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: 'ignore', env, cwd });
    child.once('error', () => undefined);
    child.unref();
    answer(child.pid ? { pid: child.pid } : { error: `could not start ${argv[0]}` });
  } catch (error) {
    answer({ error: String(error?.message ?? error) });
  }
});
