import { Command } from 'clipanion';
import { loadConfig } from '../../platform/config.ts';
import { runUntilSignalled } from '../shutdown.ts';

export class WorkerCommand extends Command {
  static override paths = [['worker']];

  static override usage = Command.Usage({
    description: 'run a worker alone: the unit svc scales out by',
    details: `
      Connects to Temporal (\`TEMPORAL_ADDRESS\`, default the embedded server's 127.0.0.1:7233) and to the read model (\`DATABASE_URL\`, default the embedded SQLite file in the data directory), then runs svc's workflows and activities on the task queue \`SVC_TASK_QUEUE\` (default svc) until SIGINT or SIGTERM, when it drains in-flight work and exits.

      Run as many as you like against one Temporal cluster and one PostgreSQL database.
    `,
    examples: [
      ['Add a worker to a local `svc serve`', '$0 worker'],
      ['Join a cluster', 'TEMPORAL_ADDRESS=temporal:7233 DATABASE_URL=postgres://svc@db/svc $0 worker'],
    ],
  });

  override async execute(): Promise<number> {
    const config = loadConfig();
    config.temporalAddress ??= '127.0.0.1:7233';
    const log = (line: string) => this.context.stdout.write(`${line}\n`);
    // Loaded on demand: the stack pulls in Temporal, the ORM and the API, which other commands do not need.
    const { startStack } = await import('../../stack/stack.ts');
    const stack = await startStack({ config, api: false, worker: true, noAuth: false, log });
    return runUntilSignalled(() => stack.stop(), stack.worker!.done, log);
  }
}
