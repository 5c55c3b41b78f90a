import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { isLoopbackHost, loadConfig } from '../../platform/config.ts';
import { runUntilSignalled } from '../shutdown.ts';
import { startService } from '../start-service.ts';

export class ServeCommand extends Command {
  static override paths = [['serve']];

  static override usage = Command.Usage({
    description: 'start the whole service: Temporal, the read model, a worker and the HTTP API',
    details: `
      With no configuration, starts the embedded stack: a Temporal dev server (state kept in the data directory, with
      its Web UI), the SQLite read model (migrated), a worker and the API on loopback. It prints the API URL, where the
      operator token is and the Temporal UI URL, then runs until SIGINT or SIGTERM, when it ends streams, drains the
      worker and stops the server.

      With \`TEMPORAL_ADDRESS\` set it uses that Temporal instead of starting one; with \`DATABASE_URL=postgres://…\` it
      uses PostgreSQL. Other settings come from the environment (see the README's Configuration table).

      A configuration mistake (an environment variable, the agents file) is one line on stderr and exit code 2, before
      anything starts. One \`svc serve\` runs per data directory: a second one on the same directory exits with code 6,
      naming the first one's pid and URL.

      \`--no-auth\` treats every caller as the operator. It is refused unless the API is bound to a loopback address.
    `,
    examples: [
      ['Start the embedded stack', '$0 serve'],
      ['Start without bearer auth on loopback', '$0 serve --no-auth'],
      [
        'Use an external Temporal and PostgreSQL',
        'TEMPORAL_ADDRESS=temporal:7233 DATABASE_URL=postgres://svc@db/svc $0 serve --host 0.0.0.0',
      ],
    ],
  });

  auth = Option.Boolean('--auth', true, { description: 'require a bearer token (--no-auth: loopback only)' });
  host = Option.String('--host', { description: 'address to bind the API to (default SVC_HOST or 127.0.0.1)' });
  port = Option.String('--port', {
    description: 'API port (default SVC_PORT or 8080)',
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(0, 65535)]),
  });
  worker = Option.Boolean('--worker', true, { description: 'run a worker in this process (--no-worker: API only)' });

  override async execute(): Promise<number> {
    const log = (line: string) => this.context.stdout.write(`${line}\n`);
    const stack = await startService(this.context.stderr, () => {
      const config = loadConfig();
      if (this.host) config.host = this.host;
      if (this.port !== undefined) config.port = this.port;
      if (!this.auth && !isLoopbackHost(config.host)) {
        throw new UsageError(`--no-auth is only allowed on a loopback address, not ${config.host}`);
      }
      return { config, api: true, worker: this.worker, noAuth: !this.auth, log };
    });
    if (typeof stack === 'number') return stack;
    const { config } = stack;
    log('');
    log('svc is up');
    log(`  Dashboard:      ${stack.api!.url}/`);
    log(`  API:            ${stack.api!.url}`);
    log(`  Previews:       ${stack.api!.previewUrl}/p/<run id>/ (after POST /runs/{id}/preview/login)`);
    const token = stack.token.source === 'environment' ? 'from SVC_API_TOKEN' : stack.token.path;
    log(`  operator token: ${!this.auth ? 'not required (--no-auth)' : token}`);
    log(`  Temporal UI:    ${stack.temporalUiUrl ?? '(external Temporal: use its own UI)'}`);
    log(`  data directory: ${config.dataDir}`);
    const setupLink = await stack.setupLink();
    if (setupLink) {
      log(`  sign in a browser (once, within 10 minutes): ${setupLink}`);
      log('  a fresh sign-in link, any time: svc login');
    }
    return runUntilSignalled(() => stack.stop(), stack.worker?.done ?? new Promise(() => {}), log);
  }
}
