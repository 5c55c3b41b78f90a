// A run's event log as plain text: each NDJSON event line (GET /runs/{id}/events' shape, already
// masked for a spectator) becomes one human line (core/event-log-line.ts), chunk by chunk.
import { Readable } from 'node:stream';
import { plainLogLine } from '../../core/event-log-line.ts';

export function presentLogLines(ndjson: Readable): Readable {
  return Readable.from(
    (async function* () {
      for await (const chunk of ndjson) {
        for (const line of String(chunk).split('\n')) {
          if (line.trim()) yield `${plainLogLine(JSON.parse(line) as Parameters<typeof plainLogLine>[0])}\n`;
        }
      }
    })(),
  );
}
