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
}

export interface CostCapCrossing {
  costUsd: number;
  maxCostUsd: number;
}

const STDERR_HEAD_LINES = 20;

/**
 * The events in the sandbox's files past the offsets in `progress` (which it advances). `final`:
 * the writer has exited, so a last line without its newline counts too.
 */
export function readSandboxEvents(
  files: SandboxFiles,
  adapter: RuntimeAdapter,
  progress: SupervisionProgress,
  final: boolean,
): RunEventInput[] {
  const events: RunEventInput[] = [];
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
    for (const line of lines) events.push(outputEvent(adapter, stream, line, progress));
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

function outputEvent(
  adapter: RuntimeAdapter,
  stream: EventStream,
  line: { offset: number; text: string },
  progress: SupervisionProgress,
): RunEventInput {
  if (stream === 'stderr' && progress.stderrHead.length < STDERR_HEAD_LINES) progress.stderrHead.push(line.text);
  const parsed = adapter.parseLine(stream, line.text, progress.runtime);
  return {
    dedupeKey: `${progress.generation ? `g${progress.generation}:` : ''}${stream}:${line.offset}`,
    kind: parsed.kind,
    stream,
    ts: new Date().toISOString(),
    payload: parsed.payload,
  };
}
