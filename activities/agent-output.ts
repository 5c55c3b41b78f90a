// The agent's output into its run's event log: what the supervising activity does at each look at
// the sandbox, and once more, read by read, after the agent has ended.
import { Context, heartbeat } from '@temporalio/activity';
import type { ReadModel } from '../db/orm.ts';
import { secondsBetween, svcMetrics } from '../platform/metrics.ts';
import { appendRunEvents, type RunEventInput } from './read-model/run-projection.ts';
import type { RuntimeAdapter } from './runtimes/types.ts';
import { readJsonIfExists, sandboxFiles, type AgentRecord } from '../sandbox/index.ts';
import { readSandboxEvents, type SupervisionProgress } from './output-ingest.ts';

/**
 * At most this many reads after the end (a GiB a stream): the files no longer grow once the agent
 * and its supervisor are gone, but a writer svc does not know of must not keep the loop going.
 */
const FINAL_READS_MAX = 1024;

/**
 * Events one transaction writes. A read of a chatty agent's output can be 100k short lines; as one
 * transaction it held the run's row for as long as the worker took to write them all, and went by
 * without a heartbeat, so Temporal started the supervising activity again beside the first.
 */
const EVENTS_PER_WRITE = 2000;

export function createOutputIngest(
  readModel: ReadModel,
  sandboxDir: (runId: string) => string,
  outputMaxBytes: number | null,
) {
  /** The first output of the agent (heartbeats carry the flag, so a retried attempt observes nothing). */
  function observeFirstOutput(runId: string, events: RunEventInput[], progress: SupervisionProgress) {
    const output = events.find((event) => event.stream !== 'system');
    if (!output || progress.firstOutputSeen) return;
    progress.firstOutputSeen = true;
    const spawnedAt = readJsonIfExists<AgentRecord>(sandboxFiles(sandboxDir(runId)).agent)?.spawnedAt ?? null;
    const seconds = secondsBetween(spawnedAt, output.ts);
    if (seconds !== null) svcMetrics.firstOutputSeconds.observe(seconds);
  }

  /**
   * Turns the agent's new output into run events. `final` (the agent has ended): read by read (1 MiB
   * a stream each) until all it printed is in, heartbeating the offsets between reads; one read
   * used to be all, and a fast agent's output past it was never recorded.
   */
  return async function ingestOutput(
    runId: string,
    adapter: RuntimeAdapter,
    progress: SupervisionProgress,
    final: boolean,
    /** Masks the run's project secrets in each line (readSandboxEvents). */
    mask?: (text: string) => string,
  ): Promise<void> {
    for (let read = 0; ; read++) {
      const before = JSON.stringify(progress.offsets);
      if (read > 0) heartbeat(progress);
      const dropped = progress.droppedLines ?? 0;
      // What a retry would resume from while this read's events are only partly written.
      const resume = structuredClone(progress);
      const events = readSandboxEvents(sandboxFiles(sandboxDir(runId)), adapter, progress, final, outputMaxBytes, mask);
      if ((progress.droppedLines ?? 0) > dropped)
        svcMetrics.outputLinesDropped.inc((progress.droppedLines ?? 0) - dropped);
      for (let start = 0; start < events.length; start += EVENTS_PER_WRITE) {
        if (start > 0) {
          // An attempt Temporal has given up on (its heartbeat timed out) stops here: its retry goes on.
          Context.current().cancellationSignal.throwIfAborted();
          heartbeat(resume);
        }
        await appendRunEvents(readModel.em(), runId, events.slice(start, start + EVENTS_PER_WRITE));
      }
      observeFirstOutput(runId, events, progress);
      if (!final || JSON.stringify(progress.offsets) === before || read + 1 >= FINAL_READS_MAX) return;
    }
  };
}
