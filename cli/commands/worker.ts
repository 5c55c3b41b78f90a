import { Command } from 'clipanion';
import { loadConfig } from '../../platform/config.ts';
import { readInstanceRecord } from '../../stack/instance-lock.ts';
import { runUntilSignalled } from '../shutdown.ts';
import { startService } from '../start-service.ts';

export class WorkerCommand extends Command {
  static override paths = [['worker']];

  static override usage = Command.Usage({
    description: 'run a worker alone: the unit svc scales out by',
    details: `
      Connects to Temporal (\`TEMPORAL_ADDRESS\`; default the Temporal of the \`svc serve\` holding the same data
      directory, else 127.0.0.1:7233) and to the read model (\`DATABASE_URL\`, default the embedded SQLite file in the
      data directory), then runs svc's workflows and activities on the task queue \`SVC_TASK_QUEUE\` (default svc) until
      SIGINT or SIGTERM, when it drains in-flight work and exits.

      Run as many as you like against one Temporal cluster and one PostgreSQL database. Workers take no hold on their
      data directory: several on one host share it (runs need that), and one beside a \`svc serve\` joins that instance.
      A configuration mistake is one line on stderr and exit code 2, before anything starts.
    `,
    examples: [
      ['Add a worker to a local `svc serve`', '$0 worker'],
      ['Join a cluster', 'TEMPORAL_ADDRESS=temporal:7233 DATABASE_URL=postgres://svc@db/svc $0 worker'],
    ],
  });

  override async execute(): Promise<number> {
    const log = (line: string) => this.context.stdout.write(`${line}\n`);
    const stack = await startService(this.context.stderr, () => {
      const config = loadConfig();
      // A worker on a serve's data directory joins it: that serve's Temporal, unless told otherwise.
      config.temporalAddress ??= readInstanceRecord(config.dataDir)?.temporalAddress ?? '127.0.0.1:7233';
      return { config, api: false, worker: true, noAuth: false, log };
    });
    if (typeof stack === 'number') return stack;
    return runUntilSignalled(() => stack.stop(), stack.worker!.done, log);
  }
}
