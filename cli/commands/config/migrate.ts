import { resolve } from 'node:path';
import { Command, Option, UsageError } from 'clipanion';
import { migrateSvcConfig, SvcConfigFileError } from '../../../platform/svc-config-files.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import type { MigrateResponse } from '../../client/responses.ts';

export class ConfigMigrateCommand extends RemoteCommand {
  static override paths = [['config', 'migrate']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: 'convert a legacy .svc/defaults.json into config.yaml plus preview.yaml',
    details: `
      Reads \`.svc/defaults.json\`, writes its settings to \`.svc/config.yaml\` and its \`preview\` block (if any) to
      \`.svc/preview.yaml\`, then deletes \`defaults.json\`. Refuses when there is no defaults.json, when it is invalid,
      or when config.yaml or preview.yaml already exist.

      \`--cwd\` (default: the current directory) works on a local repository; \`--project\` asks the server to migrate
      its clone of that project.
    `,
    examples: [
      ['Migrate the current repository', '$0 config migrate'],
      ['Migrate a registered project on the server', '$0 config migrate --project prj_0123456789ab'],
    ],
  });

  project = Option.String('--project', { description: 'a project id (prj_…): migrate the server clone' });
  cwd = Option.String('--cwd', { description: 'a repository directory (default: the current directory)' });

  protected async run(): Promise<number> {
    if (this.project && this.cwd) throw new UsageError('--project and --cwd exclude each other');
    if (this.project) {
      const result = await this.client.request<MigrateResponse>(
        'POST',
        `/projects/${encodeURIComponent(this.project)}/config-migrate`,
      );
      this.line({ ok: true, migrated: { root: this.project, files: result.files } });
      return EXIT.ok;
    }
    const root = resolve(this.cwd ?? process.cwd());
    try {
      this.line({ ok: true, migrated: { root, files: migrateSvcConfig(root) } });
      return EXIT.ok;
    } catch (error) {
      if (error instanceof SvcConfigFileError) throw new UsageError(error.message);
      throw error;
    }
  }
}
