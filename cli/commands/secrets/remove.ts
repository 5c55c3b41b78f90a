import { Command, Option, UsageError } from 'clipanion';
import { secretNameRefusal } from '../../../core/project-secrets.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';

export class SecretsRemoveCommand extends RemoteCommand {
  static override paths = [
    ['secrets', 'rm'],
    ['secrets', 'remove'],
  ];

  static override usage = Command.Usage({
    category: 'Projects',
    description: "remove a project's secret (DELETE /projects/{id}/secrets/{name})",
    details: `
      The project is its id (prj_…) or owner/repo. Runs started from then on no longer get the variable; a run already
      running keeps what it was given. Prints \`{"name","removed":true}\`; a name the project has no secret by is
      \`not_found\` (exit code 2).
    `,
    examples: [
      ['Remove a token', '$0 secrets rm acme/widget NPM_TOKEN'],
      ['The same, by project id, as text', '$0 secrets rm prj_0123456789ab NPM_TOKEN --output pretty'],
    ],
  });

  project = Option.String({ name: 'project' });
  name = Option.String({ name: 'NAME' });

  protected async run(): Promise<number> {
    const refusal = secretNameRefusal(this.name);
    if (refusal) throw new UsageError(`the secret's name ${refusal}`);
    const project = await resolveProject(this.client, this.project);
    await this.client.request('DELETE', `/projects/${project}/secrets/${this.name}`);
    if (this.output === 'pretty') this.line(`secret ${this.name} of ${project} removed`);
    else this.line({ name: this.name, removed: true });
    return EXIT.ok;
  }
}
