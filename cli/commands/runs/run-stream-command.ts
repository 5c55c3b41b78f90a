// What `svc run` and `svc runs logs` share: a run's events printed as they come, re-attached after a
// dropped stream until the run ends, and the `--raw` switch for the agent's own escape sequences.
import { Option } from 'clipanion';
import { RUN_EVENTS_PAGE } from '../../../core/event-kinds.ts';
import { isTerminalRunState } from '../../../core/run-states.ts';
import type { RunJson } from '../../../core/run-schema.ts';
import { RemoteCommand } from '../../base-command.ts';
import type { GetRunResponse } from '../../client/responses.ts';
import { eventColour, eventText, type RunEvent } from './run-text.ts';

/** How long to wait before attaching again to a live run whose stream closed (an API restart). */
const REATTACH_DELAY_MS = 1_000;

export abstract class RunStreamCommand extends RemoteCommand {
  override raw = Option.Boolean('--raw', false, {
    description: "print the agent's escape sequences as they are (default: shown as text, e.g. \\x1b[31m)",
  });

  /**
   * Prints the run's events (`record` is what a JSON mode prints of one) from its first, or only the
   * ones stored so far when not following. Answers the run as it is after the last one, or
   * 'detached' after a Ctrl-C.
   */
  protected async printEvents(
    runId: string,
    follow: boolean,
    record: (event: RunEvent) => unknown,
  ): Promise<RunJson | 'detached'> {
    const id = encodeURIComponent(runId);
    let since = 0;
    for (;;) {
      // A read that does not follow comes in pages, cut by count or by bytes: read on until one is empty.
      const page = follow ? '' : `&limit=${RUN_EVENTS_PAGE}`;
      let read = 0;
      const tailed = await this.tail(
        `/runs/${id}/events?follow=${follow ? 1 : 0}&since=${since}${page}`,
        (event: RunEvent) => {
          since = Math.max(since, event.seq);
          read += 1;
          this.emit(record(event), eventText(event), eventColour(event));
        },
      );
      if (tailed === 'detached') return 'detached';
      if (!follow && read > 0) continue;
      const { run } = await this.client.request<GetRunResponse>('GET', `/runs/${id}`);
      if (!follow || isTerminalRunState(run.state)) return run;
      await new Promise((resolve) => setTimeout(resolve, REATTACH_DELAY_MS));
    }
  }
}
