import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { MAX_SECRET_VALUE_BYTES, SECRET_SCOPES, secretNameRefusal } from '../../../core/project-secrets.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';

export class SecretsSetCommand extends RemoteCommand {
  static override paths = [['secrets', 'set']];

  static override usage = Command.Usage({
    category: 'Projects',
    description: "set a project's secret (PUT /projects/{id}/secrets/{name})",
    details: `
      The value is read from stdin (one trailing newline dropped), or from the file \`--value-file\` names (as it is);
      never from the command line, which other users of the machine see. The project is its id (prj_…) or owner/repo.

      \`--scope run\` (the default): every run of the project gets it as the environment variable NAME. \`--scope
      setup\`: kept for a repository setup step, which svc does not have yet: today it reaches no run. A name must look
      like an environment variable (A-Z, 0-9, _) and not be one svc sets in the sandbox (SVC_*, PATH, HOME, …). Prints
      \`{"name","scope","createdAt","updatedAt","replaced"}\`; never the value.
    `,
    examples: [
      ['Set a registry token from a password manager', 'pass show npm | $0 secrets set acme/widget NPM_TOKEN'],
      [
        'Set one from a file, for a setup step',
        '$0 secrets set prj_0123456789ab CERT_PEM --value-file cert.pem --scope setup',
      ],
    ],
  });

  project = Option.String({ name: 'project' });
  name = Option.String({ name: 'NAME' });
  valueFile = Option.String('--value-file', { description: 'read the value from this file instead of stdin' });
  scope = Option.String('--scope', 'run', {
    description: 'run (every run gets it; the default) or setup (a setup step; none exists yet)',
    validator: t.isEnum(SECRET_SCOPES),
  });

  protected async run(): Promise<number> {
    const refusal = secretNameRefusal(this.name);
    if (refusal) throw new UsageError(`the secret's name ${refusal}`);
    const value = this.valueFile ? readValueFile(this.valueFile) : await readStdin(this.context.stdin);
    if (!value) throw new UsageError('the value is empty: pipe it on stdin or name a file with --value-file');
    if (Buffer.byteLength(value) > MAX_SECRET_VALUE_BYTES)
      throw new UsageError(`the value is larger than ${MAX_SECRET_VALUE_BYTES} bytes`);
    const project = await resolveProject(this.client, this.project);
    const path = `/projects/${project}/secrets/${this.name}`;
    const { status, body } = await this.client.requestWithStatus<{ secret: Record<string, string> }>('PUT', path, {
      value,
      scope: this.scope,
    });
    const replaced = status === 200;
    if (this.output === 'pretty')
      this.line(`secret ${this.name} of ${project} ${replaced ? 'replaced' : 'set'} (scope ${this.scope})`);
    else this.line({ ...body.secret, replaced });
    return EXIT.ok;
  }
}

function readValueFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --value-file ${path}: ${(error as Error).message}`);
  }
}

/** The value piped in, less the one newline `echo` or a here-string adds. */
async function readStdin(stdin: Readable & { isTTY?: boolean }): Promise<string> {
  if (stdin.isTTY)
    throw new UsageError('pipe the value on stdin (it is never taken from the command line) or give --value-file');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
