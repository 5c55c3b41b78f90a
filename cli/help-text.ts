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

/** An option line of the help: `  [bold]<definition>[/bold]    <description>`. */
const OPTION_LINE = /^  (\u001b\[1m)?(-[^ ]*(?: [^ ]+)*) *(\u001b\[22m)? {4}(.*)$/;

/** `-p,--prompt #0` → `-p,--prompt <text>`, the options' descriptions aligned again. */
export function namePlaceholders(text: string): string {
  const named = text.replace(/((?:-[\w-]+,)*(--?[\w-]+))((?: #\d+)+)/g, (_match, names: string, last: string) => {
    const value = PLACEHOLDERS[last] ?? last.replace(/^-+/, '');
    return `${names} <${value}>`;
  });
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
    return namePlaceholders(super.usage(...args));
  }

  override error(...args: Parameters<Cli['error']>): string {
    return namePlaceholders(super.error(...args));
  }
}
