// What test/api/analytics-more.test.ts adds to the runs of analytics-fixture.ts: the run events its
// behavior analytics mine (tool calls of three runtimes, log lines, steering) and a queued run
// outside the window for the queue of the dispatch analytics. Counts worked out by hand are there.
import type { EntityManager } from '@mikro-orm/sql';
import { RunEntity, RunEventEntity } from '../../db/entities/index.ts';
import { D } from './analytics-fixture.ts';

const DAY = 86_400_000;
/** Two days before the window: queued since then (the queue's oldest). */
export const QUEUED_SINCE = D - 2 * DAY;

interface SeedEvent {
  kind: string;
  payload: unknown;
}

const tool = (name: string, input: Record<string, unknown>): SeedEvent => ({
  kind: 'tool_use',
  payload: { name, input },
});
const line = (kind: string): SeedEvent => ({ kind, payload: { text: 'a line' } });
const shell: SeedEvent = { kind: 'tool_use', payload: { name: 'exec_command', command: 'ls', exitCode: 0 } };

/** Claude Code (absolute paths in /workspace), OpenCode (relative filePath), Codex (shell only). */
const EVENTS: Record<string, SeedEvent[]> = {
  r1: [
    line('log.stdout'),
    tool('Edit', { file_path: '/workspace/api/routes/a.ts' }),
    tool('Edit', { file_path: '/workspace/api/routes/b.ts' }),
    tool('Read', { file_path: '/workspace/api/x.ts' }),
    line('steer.sent'),
    line('steer.sent'),
    line('log.stdout'),
  ],
  r2: [tool('Write', { file_path: '/workspace/README.md' }), tool('Bash', { command: 'npm test' }), line('log.stderr')],
  r3: [tool('edit', { filePath: 'web/src/app.ts' }), tool('read', { filePath: 'web/src/app.ts' }), line('log.stdout')],
  r6: [shell, shell, line('log.stdout')],
  r7: [
    tool('Edit', { file_path: '/workspace/api/routes/a.ts' }),
    tool('Edit', { file_path: '/tmp/scratch.txt' }),
    line('steer.sent'),
  ],
  // Outside the window: never counted.
  r8: [tool('Edit', { file_path: '/workspace/old/x.ts' }), line('log.stdout')],
};

/** Writes the events above and r11, queued in P1 since QUEUED_SINCE. */
export async function seedAnalyticsEvents(em: EntityManager): Promise<void> {
  for (const [runId, events] of Object.entries(EVENTS))
    events.forEach((event, index) =>
      em.create(RunEventEntity, {
        runId,
        seq: index + 1,
        ts: new Date(D + index),
        kind: event.kind,
        stream: 'system',
        payload: event.payload,
        dedupeKey: `seed:${index + 1}`,
      }),
    );
  em.create(RunEntity, {
    id: 'r11',
    agentName: 'builder',
    projectId: 'P1',
    state: 'queued',
    createdAt: QUEUED_SINCE,
    prompt: 'analytics',
    trigger: 'cli',
    updatedAt: new Date(),
  });
  await em.flush();
}

// Expected values, written out.

/** An expected outcome side: runs, terminal, succeeded, PR state known, merged. */
export const side = (key: string, [runs, terminal, succeeded, known, merged]: number[]) => ({
  key,
  runs: runs!,
  terminal: terminal!,
  succeeded: succeeded!,
  successRate: terminal ? succeeded! / terminal : null,
  prStateKnown: known!,
  prsMerged: merged!,
  mergedPrRate: known ? merged! / known : null,
});
export const mined = (key: string, count: number, runs: number, total: number) => ({
  key,
  count,
  runs,
  share: count / total,
});
