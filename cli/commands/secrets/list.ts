import { Command, Option } from 'clipanion';
import { EXIT, RemoteCommand, table } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';

export class SecretsListCommand extends RemoteCommand {
  static override paths = [['secrets', 'ls'], ['secrets', 'list'], ['secrets']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: "list a project's secrets, never their values (GET /projects/{id}/secrets)",
    details: `
      The project is its id (prj_…) or owner/repo. Prints one \`{"name","scope","createdAt","updatedAt"}\` object
      per line (\`--output json\`: one JSON array of them), or with \`--output pretty\` a table (\`(no secrets)\`
      when there is none). No value is ever shown: svc answers none.
    `,
    examples: [
      ['List the secrets of a project', '$0 secrets ls acme/widget'],
      ['The same, as a table', '$0 secrets ls prj_0123456789ab --output pretty'],
    ],
  });

  project = Option.String({ name: 'project' });

  protected async run(): Promise<number> {
    const project = await resolveProject(this.client, this.project);
    const { secrets } = await this.client.request<{
      secrets: { name: string; scope: string; createdAt: string; updatedAt: string }[];
    }>('GET', `/projects/${project}/secrets`);
    if (this.output === 'pretty')
      this.line(
        secrets.length
          ? table(
              ['NAME', 'SCOPE', 'UPDATED'],
              secrets.map((secret) => [secret.name, secret.scope, secret.updatedAt]),
            )
          : '(no secrets)',
      );
    else this.list(secrets);
    return EXIT.ok;
  }
}
