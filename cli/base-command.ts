// What every command shares: output mode, and the mapping from failures to exit codes
// (0 ok, 1 failed, 2 usage, validation or configuration, 3 server unreachable, 4 not authorised,
// 5 the data directory is another `svc serve`'s).
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { ServerError, ServerUnreachableError, SvcClient } from './client/http.ts';
import { resolveClientSettings } from './client/settings.ts';

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  unreachable: 3,
  unauthorised: 4,
  inUse: 5,
  interrupted: 130,
} as const;

export const OUTPUT_MODES = ['ndjson', 'json', 'pretty'] as const;
export type OutputMode = (typeof OUTPUT_MODES)[number];

export abstract class SvcCommand extends Command {
  output = Option.String('--output', 'ndjson', {
    description: 'ndjson (default), json or pretty',
    validator: t.isEnum(OUTPUT_MODES),
  });

  protected abstract run(): Promise<number>;

  override async execute(): Promise<number> {
    try {
      return await this.run();
    } catch (error) {
      return this.fail(error);
    }
  }

  protected line(value: unknown): void {
    this.context.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
  }

  /** One record of a streaming command: the JSON object, or with `--output pretty` its text line. */
  protected emit(value: unknown, pretty: string): void {
    this.line(this.output === 'pretty' ? pretty : value);
  }

  protected fail(error: unknown): number {
    const say = (code: string, message: string, hint?: string) => {
      this.context.stderr.write(`svc: [${code}] ${message}\n`);
      if (hint) this.context.stderr.write(`  hint: ${hint}\n`);
    };
    if (error instanceof UsageError) {
      say('usage', error.message, `svc ${this.path.join(' ')} --help`);
      return EXIT.usage;
    }
    if (error instanceof ServerUnreachableError) {
      say('unreachable', error.message, 'is `svc serve` running? set --url or SVC_BASE_URL');
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
