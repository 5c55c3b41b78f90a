// The sandbox supervisor: a small process, detached from the worker, that owns agent processes
// (supervision.ts does the owning). A worker that dies loses nothing: a new one reads the sandbox's
// files and carries on. Two ways to run it:
//   node supervisor.ts <sandbox-dir> [--reattach]      one sandbox; a stop is a SIGTERM
//   node supervisor.ts --host <socket> <sandboxes-dir>  the worker host's shared supervisor
//                                                       (supervisor-host.ts)
import { appendFileSync } from 'node:fs';
import { processStartTime } from '../../platform/processes.ts';
import { sandboxFiles } from './files.ts';
import { superviseSandbox } from './supervision.ts';
import { serveSupervisorHost } from './supervisor-host.ts';

const [first, second, third] = process.argv.slice(2);
if (!first || (first === '--host' && !(second && third))) {
  process.stderr.write('usage: supervisor.ts <sandbox-dir> [--reattach] | --host <socket> <sandboxes-dir>\n');
  process.exit(2);
}
// The sandbox's own mount points are made under this umask and must be traversable by the agent's
// uid; svc's records and logs here are created 0600 explicitly instead.
process.umask(0o022);
const self = { pid: process.pid, startTime: processStartTime(process.pid) ?? null };

if (first === '--host') await serveSupervisorHost(second!, third!, self);
else await superviseOne(first, second === '--reattach');

async function superviseOne(dir: string, reattach: boolean): Promise<void> {
  // A supervisor that crashes says why (it has no terminal): the sandbox is then `lost`, and this tells the operator.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const)
    process.on(event, (error: unknown) => {
      const line = `${new Date().toISOString()} ${event}: ${(error as Error)?.stack ?? error}\n`;
      appendFileSync(sandboxFiles(dir).supervisorLog, line);
      process.exit(70);
    });
  const supervision = await superviseSandbox(dir, self, { reattach });
  if (!supervision) process.exit(0);
  // A stop request from svc (cancel, cap, watchdog): passed to the agent's whole group.
  for (const name of ['SIGTERM', 'SIGINT'] as const) process.on(name, () => supervision.stop());
  await supervision.ended;
  process.exit(0);
}
