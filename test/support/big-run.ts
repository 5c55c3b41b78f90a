// A run with a large event log, written straight into a read model: a project (so spectators of
// its owner see it) and a terminal run whose agent printed `events` lines of `lineBytes` each.
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { initialRunSnapshot } from '../../core/run-model.ts';
import { projectRunRow } from '../../activities/read-model/run-projection.ts';
import { ProjectEntity, RunEventEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';

export interface BigRun {
  projectId: string;
  runId: string;
  events: number;
  /** The log's size as the events route sends it to the operator, roughly. */
  bytes: number;
}

export async function seedBigRun(
  readModel: ReadModel,
  { owner, events, lineBytes = 200 }: { owner: string; events: number; lineBytes?: number },
): Promise<BigRun> {
  const projectId = newId('project');
  const em = readModel.em();
  em.create(ProjectEntity, {
    id: projectId,
    gitUrl: `https://github.com/${owner}/${projectId}`,
    localPath: `/tmp/${projectId}`,
    defaultBranch: 'main',
    addedAt: new Date(),
  });
  await em.flush();
  const runId = newId('run');
  const input = buildRunInput(
    { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId, prompt: 'print a lot', trigger: 'cli' },
    '/tmp',
  );
  await projectRunRow(readModel.em(), { ...initialRunSnapshot(input), state: 'succeeded', projectionVersion: 1 });
  const filler = 'x'.repeat(Math.max(0, lineBytes - 16));
  const ts = new Date();
  let bytes = 0;
  for (let start = 0; start < events; start += 1000) {
    const rows = Array.from({ length: Math.min(1000, events - start) }, (_, i) => {
      const seq = start + i + 1;
      const text = `${String(seq).padStart(8, '0')} ${filler}`;
      bytes += text.length + 120;
      return {
        runId,
        seq,
        ts,
        kind: 'log.stdout',
        stream: 'stdout' as const,
        payload: { text },
        dedupeKey: `stdout:${seq}`,
      };
    });
    await readModel.em().insertMany(RunEventEntity, rows);
  }
  return { projectId, runId, events, bytes };
}
