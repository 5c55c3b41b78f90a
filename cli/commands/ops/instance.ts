import { Command } from 'clipanion';
import type { z } from 'zod';
import type { instanceResponse } from '../../../api/routes/ops.schema.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import { duration } from '../analytics/analytics-command.ts';

type Instance = z.output<typeof instanceResponse>;

export class OpsInstanceCommand extends RemoteCommand {
  static override paths = [['ops', 'instance']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: 'which svc answers: version, name, public URL, sandbox runtime, auth mode (operators: more)',
    details: `
      GET /instance. NDJSON prints the answer as one line. \`--output pretty\` prints \`<name> <version> —
      runtime <r>, auth <mode>, <public URL>\`, and for operators a second line with the database backend and
      the uptime.
    `,
    examples: [
      ['The instance', '$0 ops instance --output pretty'],
      ['Its version only', '$0 ops instance | jq -r .version'],
    ],
  });

  protected async run(): Promise<number> {
    const instance = await this.client.request<Instance>('GET', '/instance');
    if (this.output !== 'pretty') {
      this.line(instance);
      return EXIT.ok;
    }
    this.line(
      `${instance.name} ${instance.version} — runtime ${instance.runtime}, auth ${instance.authMode}, ` +
        `${instance.publicUrl ?? 'no public URL'}`,
    );
    if ('dbBackend' in instance)
      this.line(`database ${instance.dbBackend}, up ${duration(instance.uptimeSeconds * 1000)}`);
    return EXIT.ok;
  }
}
