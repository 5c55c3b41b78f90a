// `svc -V` / `svc --version` / `svc -v`: the client's version (the reference's flag is -V; clipanion's
// built-in answers only -v and --version).
import { Command } from 'clipanion';
import { SVC_VERSION } from '../../platform/version.ts';
import { EXIT } from '../base-command.ts';

export class VersionCommand extends Command {
  static override paths = [['-V'], ['-v'], ['--version']];

  static override usage = Command.Usage({
    description: "print svc's version",
    details: 'Prints the version of this svc client and exits 0. `GET /version` asks a server for its own.',
    examples: [['Print the version', 'svc -V']],
  });

  override async execute(): Promise<number> {
    this.context.stdout.write(`${SVC_VERSION}\n`);
    return EXIT.ok;
  }
}
