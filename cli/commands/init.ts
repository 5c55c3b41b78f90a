import { resolve } from 'node:path';
import { Command, Option, UsageError } from 'clipanion';
import { scaffoldSvcConfig, SvcConfigFileError } from '../../platform/svc-config-files.ts';
import { ServerUnreachableError } from '../client/http.ts';
import { EXIT, RemoteCommand } from '../base-command.ts';
import type { InitResponse } from '../client/responses.ts';

export class InitCommand extends RemoteCommand {
  static override paths = [['init']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: 'scaffold .svc/triggers.yaml and .svc/config.yaml in a project repository',
    details: `
      With \`--cwd\` (the default: the current directory) the files are written into that repository; with \`--project\`
      the server writes them into its clone of that project. The two options exclude each other.

      \`config.yaml\` gets \`defaultRole\` from \`--default-role\` (checked against the server's agents) or, when the
      server knows exactly one agent, that one. Existing files are never overwritten: init refuses instead.

      Prints \`{"ok":true,"scaffolded":{"root","files","defaultRole"}}\`.
    `,
    examples: [
      ['Scaffold in the current repository', '$0 init'],
      ['Scaffold with a default agent', '$0 init --default-role shell'],
      ['Scaffold in a registered project on the server', '$0 init --project prj_0123456789ab'],
    ],
  });

  project = Option.String('--project', { description: 'a project id (prj_…): write into the server clone' });
  cwd = Option.String('--cwd', { description: 'a repository directory (default: the current directory)' });
  defaultRole = Option.String('--default-role', { description: 'the agent to set as defaultRole' });

  protected async run(): Promise<number> {
    if (this.project && this.cwd) throw new UsageError('--project and --cwd exclude each other');
    if (this.project) {
      const result = await this.client.request<InitResponse>(
        'POST',
        `/projects/${encodeURIComponent(this.project)}/init`,
        {
          defaultRole: this.defaultRole ?? null,
        },
      );
      this.line({ ok: true, scaffolded: { root: this.project, files: result.files, defaultRole: result.defaultRole } });
      return EXIT.ok;
    }
    const root = resolve(this.cwd ?? process.cwd());
    const role = await this.#resolveRole();
    try {
      const files = scaffoldSvcConfig(root, role);
      this.line({ ok: true, scaffolded: { root, files, defaultRole: role ?? null } });
      return EXIT.ok;
    } catch (error) {
      if (error instanceof SvcConfigFileError) throw new UsageError(error.message);
      throw error;
    }
  }

  /** Checks --default-role against the server's agents, or picks the only one; offline, trusts the flag. */
  async #resolveRole(): Promise<string | undefined> {
    let agents: { name: string }[];
    try {
      agents = (await this.client.request<{ agents: { name: string }[] }>('GET', '/agents')).agents;
    } catch (error) {
      if (error instanceof ServerUnreachableError) {
        this.context.stderr.write(`svc: note: ${error.message}; --default-role not checked\n`);
        return this.defaultRole;
      }
      throw error;
    }
    if (this.defaultRole) {
      if (!agents.some((agent) => agent.name === this.defaultRole))
        throw new UsageError(
          `unknown agent "${this.defaultRole}"; the server knows: ${agents.map((a) => a.name).join(', ')}`,
        );
      return this.defaultRole;
    }
    return agents.length === 1 ? agents[0]!.name : undefined;
  }
}
