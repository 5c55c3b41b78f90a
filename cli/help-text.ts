// clipanion 3 names an option's value `#0` in help and usage errors (`--url #0`). svc's help names it:
// `--url <url>`, from the option's own name unless the table below knows a better word.
import { Cli } from 'clipanion';

/** Value names that say more than the option's name. */
const PLACEHOLDERS: Record<string, string> = {
  '--output': 'pretty|json|ndjson',
  '--prompt': 'text',
  '--max-cost-usd': 'usd',
  '--base-commit': 'sha',
  '--project': 'project',
  '--state': 'state',
  '--from': 'date',
  '--to': 'date',
  '--limit': 'n',
  '--port': 'port',
  '--host': 'host',
  '--cwd': 'path',
  '--reason': 'text',
  '--priority': 'priority',
};

/** A command whose option means something else than the same option elsewhere. */
const COMMAND_PLACEHOLDERS: Record<string, Record<string, string>> = {
  'db migrate-to-postgres': { '--from': 'sqlite-file', '--to': 'postgres-url' },
};

/** An option line of the help: `  [bold]<definition>[/bold]    <description>`. */
const OPTION_LINE = /^  (\u001b\[1m)?(-[^ ]*(?: [^ ]+)*) *(\u001b\[22m)? {4}(.*)$/;

/**
 * `-p,--prompt #0` → `-p,--prompt <text>`, the options' descriptions aligned again. `command` is the
 * path of the command the text is about, when it is one command's; a line naming a command (a
 * usage line of the whole list) takes that command's names.
 */
export function namePlaceholders(text: string, command?: string): string {
  const named = text
    .split('\n')
    .map((line) => {
      const own = command ?? Object.keys(COMMAND_PLACEHOLDERS).find((path) => line.includes(` ${path} `));
      const names = { ...PLACEHOLDERS, ...(own ? COMMAND_PLACEHOLDERS[own] : {}) };
      return line.replace(/((?:-[\w-]+,)*(--?[\w-]+))((?: #\d+)+)/g, (_match, flags: string, last: string) => {
        const value = names[last] ?? last.replace(/^-+/, '');
        return `${flags} <${value}>`;
      });
    })
    .join('\n');
  const lines = named.split('\n');
  const width = Math.max(0, ...lines.map((line) => OPTION_LINE.exec(line)?.[2]?.length ?? 0));
  return lines
    .map((line) => {
      const match = OPTION_LINE.exec(line);
      if (!match) return line;
      const [, bold = '', definition = '', unbold = '', description = ''] = match;
      return `  ${bold}${definition.padEnd(width)}${unbold}    ${description}`;
    })
    .join('\n');
}

/** The svc Cli: clipanion's, with named option values in its help and errors. */
export class SvcCli extends Cli {
  override usage(...args: Parameters<Cli['usage']>): string {
    const [command] = args;
    // One command's help: its path names its options (a class or an instance of one).
    const paths = command
      ? ((command as { path?: string[] }).path ?? (command as { paths?: string[][] }).paths?.[0])
      : null;
    return namePlaceholders(super.usage(...args), paths?.join(' ') || undefined);
  }

  override error(...args: Parameters<Cli['error']>): string {
    return namePlaceholders(super.error(...args));
  }
}
