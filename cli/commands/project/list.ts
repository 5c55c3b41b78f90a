import { Command } from 'clipanion';
import { EXIT, RemoteCommand, table } from '../../base-command.ts';

export class ProjectListCommand extends RemoteCommand {
  static override paths = [['projects']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: 'list registered projects (GET /projects)',
    details: `
      Prints one \`{"id","gitUrl","defaultBranch"}\` object per line (\`--output json\`: one JSON array of them), or
      with \`--output pretty\` a table (\`(no projects registered)\` when there is none).
    `,
    examples: [
      ['List projects as NDJSON', '$0 projects'],
      ['List projects as a table', '$0 projects --output pretty'],
    ],
  });

  protected async run(): Promise<number> {
    const { projects } = await this.client.request<{
      projects: {
        id: string;
        gitUrl: string;
        defaultBranch: string;
        hasSeeds: boolean;
        lastFetchedAt: string | null;
      }[];
    }>('GET', '/projects');
    if (this.output === 'pretty') {
      this.line(
        projects.length
          ? table(
              ['ID', 'GIT URL', 'BRANCH', 'SEEDS', 'FETCHED'],
              projects.map((p) => [p.id, p.gitUrl, p.defaultBranch, p.hasSeeds ? 'yes' : 'no', p.lastFetchedAt ?? '—']),
            )
          : '(no projects registered)',
      );
    } else
      this.list(
        projects.map((project) => ({ id: project.id, gitUrl: project.gitUrl, defaultBranch: project.defaultBranch })),
      );
    return EXIT.ok;
  }
}
