import { Command } from 'clipanion';
import { EXIT, RemoteCommand, table } from '../../base-command.ts';
import type { AgentsResponse } from '../../client/responses.ts';

export class AgentListCommand extends RemoteCommand {
  static override paths = [['agents']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: 'list the agents this server can run (GET /agents)',
    details: `
      Prints one \`{"name","runtime","steering","costBasis","credentials","source","description"}\` object per line
      (\`--output json\`: one JSON array of them), or with \`--output pretty\` a table. \`steering\` says whether a
      message reaches the agent while it works (\`mid-run\`), only before it starts (\`spawn-only\`) or never
      (\`none\`); \`credentials\` names the model credentials it reads from svc's environment.
    `,
    examples: [
      ['List the agents as a table', '$0 agents --output pretty'],
      [
        'The names of the agents that take steering while they work',
        `$0 agents | jq -r 'select(.steering == "mid-run") | .name'`,
      ],
    ],
  });

  protected async run(): Promise<number> {
    const { agents } = await this.client.request<AgentsResponse>('GET', '/agents');
    const records = agents.map((agent) => ({
      name: agent.name,
      runtime: agent.runtime,
      steering: agent.steering,
      costBasis: agent.costBasis,
      credentials: agent.credentials,
      source: agent.source,
      description: agent.description,
    }));
    if (this.output !== 'pretty') {
      this.list(records);
      return EXIT.ok;
    }
    this.line(
      records.length
        ? table(
            ['NAME', 'RUNTIME', 'STEERING', 'SOURCE', 'CREDENTIALS'],
            records.map((agent) => [
              agent.name,
              agent.runtime,
              agent.steering,
              agent.source,
              agent.credentials.join(' or ') || '—',
            ]),
          )
        : '(no agents defined)',
    );
    return EXIT.ok;
  }
}
