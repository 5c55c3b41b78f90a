import { Command, Option } from 'clipanion';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import type { ProjectResponse } from '../../client/responses.ts';

export class ProjectAddCommand extends RemoteCommand {
  static override paths = [['add-project']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: 'register a GitHub repository as a project (POST /projects)',
    details: `
      The server clones the repository into its projects directory and detects its default branch from the remote HEAD,
      unless \`--default-branch\` names another one.

      Accepted URL forms: \`https://github.com/<owner>/<repo>[.git]\`, \`github.com/<owner>/<repo>\`,
      \`git@github.com:<owner>/<repo>.git\` and \`ssh://git@github.com/<owner>/<repo>\`.

      Prints \`{"ok":true,"project":{…}}\`. Exit codes: 0 registered, 2 rejected (bad URL, duplicate), 3 server
      unreachable, 4 not authorised, 1 anything else (for example a clone failure).
    `,
    examples: [
      ['Register a repository', '$0 add-project https://github.com/acme/widget'],
      ['Override the default branch', '$0 add-project git@github.com:acme/widget.git --default-branch develop'],
    ],
  });

  gitUrl = Option.String({ required: true, name: 'git-url' });
  defaultBranch = Option.String('--default-branch', { description: 'use this branch instead of the detected default' });

  protected async run(): Promise<number> {
    const { project } = await this.client.request<ProjectResponse>('POST', '/projects', {
      gitUrl: this.gitUrl,
      ...(this.defaultBranch ? { defaultBranch: this.defaultBranch } : {}),
    });
    if (this.output === 'pretty')
      this.line(
        `added ${project.id}  ${project.gitUrl}  (default branch ${project.defaultBranch}) at ${project.localPath}`,
      );
    else
      this.line({
        ok: true,
        project: {
          id: project.id,
          gitUrl: project.gitUrl,
          localPath: project.localPath,
          defaultBranch: project.defaultBranch,
          addedAt: project.addedAt,
        },
      });
    return EXIT.ok;
  }
}
