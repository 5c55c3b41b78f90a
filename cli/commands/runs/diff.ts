import { Command, Option } from 'clipanion';
import * as t from 'typanion';
import type { DiffFile, RunDiff } from '../../../core/run-diff.ts';
import { EXIT, OUTPUT_MODES, RemoteCommand } from '../../base-command.ts';
import { escapeControls, paint, wantsColour, type Colour } from '../../terminal-text.ts';

const COLOR_MODES = ['auto', 'always', 'never'] as const;

/** One file as `git diff` prints it: its header, then its hunks (or why there are none). */
function renderFile(file: DiffFile, paint: (colour: Colour | undefined, text: string) => string): string[] {
  const old = file.oldPath ?? file.path;
  const lines = [paint('bold', `diff --git a/${old} b/${file.path}`)];
  if (file.status === 'renamed')
    lines.push(paint('bold', `rename from ${old}`), paint('bold', `rename to ${file.path}`));
  if (file.status === 'added') lines.push(paint('bold', 'new file'));
  if (file.status === 'deleted') lines.push(paint('bold', 'deleted file'));
  if (file.binary) return [...lines, `Binary files ${old} and ${file.path} differ`];
  if (file.patch === undefined)
    return [...lines, paint('dim', `# patch not shown: over the diff limits (+${file.additions} -${file.deletions})`)];
  if (file.patch === '') return lines;
  lines.push(
    paint('bold', `--- ${file.status === 'added' ? '/dev/null' : `a/${old}`}`),
    paint('bold', `+++ ${file.status === 'deleted' ? '/dev/null' : `b/${file.path}`}`),
  );
  for (const line of file.patch.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('@@')) lines.push(paint('cyan', line));
    else if (line.startsWith('+')) lines.push(paint('green', line));
    else if (line.startsWith('-')) lines.push(paint('red', line));
    else lines.push(paint(undefined, line));
  }
  return lines;
}

export class RunsDiffCommand extends RemoteCommand {
  static override paths = [['runs', 'diff']];

  static override usage = Command.Usage({
    category: 'Runs',
    description: "show a run's change as a unified diff",
    details: `
      GET /runs/{id}/diff: the files the run's branch changes against its base, while the run goes on (its workspace's
      commits) and after it (the pushed branch, else its salvage). Prints a unified diff, coloured when stdout is a
      terminal (\`--color always|never\` decides otherwise; \`NO_COLOR\` turns colour off). A binary file is named, not
      shown; a patch over the limits is announced with its counts; when limits left anything out, a note goes to stderr.
      \`--output json\` (or \`ndjson\`) prints the API's document on one line.

      Exit 2 when the run has no change yet (\`run_has_no_change\`) or does not exist.
    `,
    examples: [
      ["A run's change", '$0 runs diff run_0123456789ab'],
      ['Into a pager, in colour', '$0 runs diff run_0123456789ab --color always | less -R'],
      ['The document, for a script', "$0 runs diff run_0123456789ab --output json | jq '.files[].path'"],
    ],
  });

  override output = Option.String('--output', 'pretty', {
    description: 'pretty (default: the unified diff), json or ndjson (the API document)',
    validator: t.isEnum(OUTPUT_MODES),
  });

  color = Option.String('--color', 'auto', {
    description: 'auto (default: when stdout is a terminal), always or never',
    validator: t.isEnum(COLOR_MODES),
  });

  id = Option.String({ required: true, name: 'run-id' });

  protected async run(): Promise<number> {
    const diff = await this.client.request<RunDiff>('GET', `/runs/${encodeURIComponent(this.id)}/diff`);
    if (this.output !== 'pretty') {
      this.line(diff);
      return EXIT.ok;
    }
    const coloured =
      this.color === 'always' || (this.color === 'auto' && wantsColour(this.context.stdout as NodeJS.WriteStream));
    // Paths and patches are the agent's text: escaped (unless --raw) before svc adds its own colours.
    const show = (colour: Colour | undefined, text: string) =>
      paint(this.raw ? text : escapeControls(text), colour, coloured);
    for (const file of diff.files) this.write(renderFile(file, show).join('\n'));
    if (diff.truncated)
      this.context.stderr.write(
        `svc: the diff is cut to its limits (files or patches left out); ${diff.files.length} files listed\n`,
      );
    return EXIT.ok;
  }
}
