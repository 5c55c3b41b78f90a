// What every command shares: output modes, terminal-safe text, and the mapping from failures to exit
// codes (0 ok, 1 failed, 2 usage, validation or configuration, 3 server unreachable, 4 not authorised,
// 5 the run was cancelled, 6 the data directory is another `svc serve`'s, 130 detached with Ctrl-C).
// docs/guide/cli.md is the user's side of it.
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { ServerError, ServerUnreachableError, SvcClient } from './client/http.ts';
import { resolveClientSettings } from './client/settings.ts';
import { type Colour, escapeControls, paint, wantsColour } from './terminal-text.ts';

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  unreachable: 3,
  unauthorised: 4,
  cancelled: 5,
  inUse: 6,
  interrupted: 130,
} as const;

/** How a command that waited for a run (or plan-run) ends: 0 succeeded, 5 cancelled, 1 anything else. */
export function exitForRunState(state: string): number {
  if (state === 'succeeded') return EXIT.ok;
  return state === 'cancelled' ? EXIT.cancelled : EXIT.failed;
}

export const OUTPUT_MODES = ['pretty', 'json', 'ndjson'] as const;
export type OutputMode = (typeof OUTPUT_MODES)[number];

/** `--output`: text for a person, one JSON document, or one JSON value per line. */
export function outputOption(fallback: OutputMode) {
  return Option.String('--output', fallback, {
    description: `pretty (text), json (one JSON document) or ndjson (one JSON value per line); default ${fallback}`,
    validator: t.isEnum(OUTPUT_MODES),
  });
}

export abstract class SvcCommand extends Command {
  output = outputOption('ndjson');
  /** `--raw` where a command has it: an agent's escape sequences reach the terminal as they are. */
  raw: boolean = false;

  /** With `--output json`, the records of a list or stream, printed as one array when the command ends. */
  #records: unknown[] | undefined;

  protected abstract run(): Promise<number>;

  override async execute(): Promise<number> {
    try {
      return await this.run();
    } catch (error) {
      return this.fail(error);
    } finally {
      if (this.#records) this.write(this.json(this.#records));
    }
  }

  protected get colours(): boolean {
    return this.output === 'pretty' && wantsColour(this.context.stdout as { isTTY?: boolean });
  }

  /** A line as it is: text already escaped and painted by the command. */
  protected write(text: string): void {
    this.context.stdout.write(`${text}\n`);
  }

  private json(value: unknown): string {
    const indent = this.output === 'json' && (this.context.stdout as { isTTY?: boolean }).isTTY ? 2 : undefined;
    return JSON.stringify(value, null, indent);
  }

  /** A JSON value as one line (one document with `--output json`), or a text line shown safely. */
  protected line(value: unknown, colour?: Colour): void {
    if (typeof value !== 'string') return this.write(this.json(value));
    this.write(paint(this.raw ? value : escapeControls(value), colour, this.colours));
  }

  /** From here on, records are a list: `--output json` prints them as one array (`[]` for none). */
  protected beginRecords(): void {
    if (this.output === 'json') this.#records ??= [];
  }

  /** One record of a list or stream: a JSON line, an element of the one array, or its text line. */
  protected emit(value: unknown, pretty: string, colour?: Colour): void {
    if (this.output === 'pretty') return this.line(pretty, colour);
    if (this.output === 'ndjson') return this.line(value);
    this.beginRecords();
    this.#records!.push(value);
  }

  /** A whole list, in a JSON mode: one JSON line per item, or one JSON array. */
  protected list(items: readonly unknown[]): void {
    this.beginRecords();
    for (const item of items) this.emit(item, '');
  }

  protected fail(error: unknown): number {
    const say = (code: string, message: string, hint?: string) => {
      this.context.stderr.write(`svc: [${code}] ${escapeControls(message)}\n`);
      if (hint) this.context.stderr.write(`  hint: ${escapeControls(hint)}\n`);
    };
    if (error instanceof UsageError) {
      say('usage', error.message, `svc ${this.path.join(' ')} --help`);
      return EXIT.usage;
    }
    if (error instanceof ServerUnreachableError) {
      say('unreachable', error.message, 'is `svc serve` running? set --url, SVC_BASE_URL or `svc login --url`');
      return EXIT.unreachable;
    }
    if (error instanceof ServerError) {
      say(error.code, error.message, error.hint);
      if (error.status === 401 || error.status === 403) return EXIT.unauthorised;
      if (error.status === 400 || error.status === 404 || error.status === 409 || error.status === 422)
        return EXIT.usage;
      return EXIT.failed;
    }
    say('failed', (error as Error)?.message ?? String(error));
    return EXIT.failed;
  }
}

/** A command that talks to a server. */
export abstract class RemoteCommand extends SvcCommand {
  url = Option.String('--url', {
    description: 'server base URL (default SVC_BASE_URL, the client config, or http://127.0.0.1:8080)',
  });
  token = Option.String('--token', { description: 'bearer token (default SVC_API_TOKEN or the client config)' });

  #client: SvcClient | undefined;

  protected get client(): SvcClient {
    this.#client ??= new SvcClient(resolveClientSettings({ url: this.url, token: this.token }));
    return this.#client;
  }

  /**
   * Follows an NDJSON event stream until it ends. Ctrl-C detaches (the work goes on) and answers
   * 'detached'; a second Ctrl-C exits at once.
   */
  protected async tail(path: string, onLine: (line: any) => void): Promise<'ended' | 'detached'> {
    const detach = new AbortController();
    let detached = false;
    const onInterrupt = () => {
      if (detached) process.exit(EXIT.interrupted);
      detached = true;
      detach.abort();
    };
    process.on('SIGINT', onInterrupt);
    try {
      for await (const line of this.client.lines(path, detach.signal)) onLine(line);
    } catch (error) {
      if (!detached) throw error;
    } finally {
      process.off('SIGINT', onInterrupt);
    }
    return detached ? 'detached' : 'ended';
  }
}

/** Renders rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  // Escaped before measuring: a cell's control characters must not break the columns (or the terminal).
  rows = rows.map((row) => row.map(escapeControls));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const render = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [render(headers), ...rows.map(render)].join('\n');
}
