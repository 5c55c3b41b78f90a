import { Command, Option } from 'clipanion';
import { EXIT, exitForRunState, outputOption } from '../../base-command.ts';
import { RunStreamCommand } from './run-stream-command.ts';

export class RunsLogsCommand extends RunStreamCommand {
  static override paths = [['runs', 'logs']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: "print a run's events; --follow stays with a live run until it ends",
    details: `
      GET /runs/{id}/events. Prints the events stored so far, one line each, and exits 0. With \`--follow\` it attaches
      to the run (again, after a Ctrl-C or from another terminal: the history first, then live lines), attaches again if
      the stream drops while the run goes on, and ends when the run ends.

      What an agent printed is shown as text: its escape sequences and control characters come out as \`\\x1b[31m\`,
      \`\\x0d\` (\`--raw\` passes them through). \`--output ndjson\` prints the events as the API sends them, one per
      line; \`--output json\` one array of them.

      Exit codes: 0 printed (with \`--follow\`: the run succeeded), 1 the followed run failed, 5 it was cancelled, 2 no
      such run, 3 server unreachable, 4 token refused, 130 detached with Ctrl-C (the run goes on). A reader that closes
      the pipe early (\`| head\`) ends it quietly with 0.
    `,
    examples: [
      ['What a run printed', '$0 runs logs run_0123456789ab'],
      ['Watch a live run to its end', '$0 runs logs run_0123456789ab --follow'],
      ['The first line only', '$0 runs logs run_0123456789ab | head -1'],
      ['Wait for a run in a script', '$0 runs logs run_0123456789ab --follow --output ndjson > events.ndjson; echo $?'],
    ],
  });

  override output = outputOption('pretty');
  id = Option.String({ required: true, name: 'run-id' });
  follow = Option.Boolean('-f,--follow', false, { description: 'stay attached until the run ends' });

  protected async run(): Promise<number> {
    this.beginRecords();
    const run = await this.printEvents(this.id, this.follow, (event) => event);
    if (run === 'detached') {
      this.context.stderr.write(`svc: detached from ${this.id}; it goes on (\`svc runs logs ${this.id} -f\` again)\n`);
      return EXIT.interrupted;
    }
    return this.follow ? exitForRunState(run.state) : EXIT.ok;
  }
}
