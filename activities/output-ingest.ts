// Turning what a sandbox wrote since the last look into run events: the agent's output lines (each
// parsed by its runtime adapter) and the egress its proxies refused. The progress is plain JSON,
// kept in the supervising activity's heartbeat, so a new worker resumes exactly where one stopped.
import type { EventStream } from '../core/run-states.ts';
import type { RunEventInput } from './read-model/run-projection.ts';
import type { RuntimeAdapter, RuntimeState } from './runtimes/types.ts';
import type { WorkspaceCrossing } from './workspace/workspace-size.ts';
import { type EgressRefusalRecord, type SandboxFiles, readNewLines, readRemainder } from '../sandbox/index.ts';

export interface SupervisionProgress {
  offsets: Record<'stdout' | 'stderr', number> & { refusals?: number };
  runtime: RuntimeState;
  stderrHead: string[];
  /** Set once the reported cost crossed the run's cap and svc stopped the agent. */
  costCap?: CostCapCrossing | null;
  /** Set once the workspace grew past SVC_RUN_WORKSPACE_MAX_MIB and svc stopped the agent. */
  workspace?: WorkspaceCrossing | null;
  /** Set once the agent's first output was ingested (svc_agent_first_output_seconds observed). */
  firstOutputSeen?: boolean;
  /** A resumed run's agent (2, 3…): its lines' event keys are its own. */
  generation?: number;
  /** Supervisors started to take over a container whose supervisor died (container backend). */
  reattachments?: number;
  /** Bytes of output lines kept as events so far (SVC_RUN_OUTPUT_MAX_MIB counts them). */
  outputBytes?: number;
  /** Output lines past the cap: read (a runtime still learns usage from them), not kept. */
  droppedLines?: number;
}

export interface CostCapCrossing {
  costUsd: number;
  maxCostUsd: number;
}

const STDERR_HEAD_LINES = 20;

/**
 * The events in the sandbox's files past the offsets in `progress` (which it advances). `final`:
 * the writer has exited, so a last line without its newline counts too. Each line is `mask`ed
 * first (the run's project secrets): no event, usage note or stderr line ever holds a value.
 */
export function readSandboxEvents(
  files: SandboxFiles,
  adapter: RuntimeAdapter,
  progress: SupervisionProgress,
  final: boolean,
  outputMaxBytes: number | null = null,
  mask: (text: string) => string = (text) => text,
): RunEventInput[] {
  const events: RunEventInput[] = [];
  // One time for the lines of one read: they were seen together, and so go in one chunk of the log.
  const ts = new Date().toISOString();
  for (const stream of ['stdout', 'stderr'] as const) {
    const path = stream === 'stdout' ? files.stdout : files.stderr;
    const { lines, nextOffset } = readNewLines(path, progress.offsets[stream]);
    progress.offsets[stream] = nextOffset;
    if (final) {
      const rest = readRemainder(path, nextOffset);
      if (rest) {
        lines.push(rest);
        progress.offsets[stream] = rest.offset + Buffer.byteLength(rest.text);
      }
    }
    for (const read of lines) {
      const line = { offset: read.offset, text: mask(read.text) };
      const event = outputEvent(adapter, stream, line, progress, ts);
      if (keep(line.text, progress, outputMaxBytes)) events.push(event);
      else if (progress.droppedLines === 1) events.push(truncatedEvent(progress, outputMaxBytes!));
    }
  }
  // Egress the sandbox's proxies refused: written by svc, outside the sandbox, so to be believed.
  const refused = readNewLines(files.refusals, progress.offsets.refusals ?? 0);
  progress.offsets.refusals = refused.nextOffset;
  for (const line of refused.lines) {
    const record = JSON.parse(line.text) as EgressRefusalRecord;
    events.push({
      dedupeKey: `${progress.generation ? `g${progress.generation}:` : ''}egress:${line.offset}`,
      kind: 'sandbox.egress_refused',
      stream: 'system',
      ts: record.ts,
      payload: record,
    });
  }
  return events;
}

/** Whether a line is kept as an event: until the run's output reaches its cap, then none. */
function keep(text: string, progress: SupervisionProgress, outputMaxBytes: number | null): boolean {
  const bytes = Buffer.byteLength(text) + 1;
  if (!progress.droppedLines && (outputMaxBytes === null || (progress.outputBytes ?? 0) + bytes <= outputMaxBytes)) {
    progress.outputBytes = (progress.outputBytes ?? 0) + bytes;
    return true;
  }
  progress.droppedLines = (progress.droppedLines ?? 0) + 1;
  return false;
}

/** Said once, where the output stops: the run goes on, its lines are no longer kept. */
function truncatedEvent(progress: SupervisionProgress, outputMaxBytes: number): RunEventInput {
  return {
    dedupeKey: `${progress.generation ? `g${progress.generation}:` : ''}output:truncated`,
    kind: 'output.truncated',
    stream: 'system',
    ts: new Date().toISOString(),
    payload: { limitBytes: outputMaxBytes, keptBytes: progress.outputBytes ?? 0 },
  };
}

function outputEvent(
  adapter: RuntimeAdapter,
  stream: EventStream,
  line: { offset: number; text: string },
  progress: SupervisionProgress,
  ts: string,
): RunEventInput {
  if (stream === 'stderr' && progress.stderrHead.length < STDERR_HEAD_LINES) progress.stderrHead.push(line.text);
  const parsed = adapter.parseLine(stream, line.text, progress.runtime);
  return {
    dedupeKey: `${progress.generation ? `g${progress.generation}:` : ''}${stream}:${line.offset}`,
    kind: parsed.kind,
    stream,
    ts,
    payload: parsed.payload,
  };
}
