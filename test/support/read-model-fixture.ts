// A scratch read model on either database, migrated (or migrated up to a point), and a run's
// snapshot to project into it: the read-model tests' shared fixture.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { initialRunSnapshot } from '../../core/run-model.ts';
import { initORM, migrate, type ReadModel } from '../../db/orm.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { suitePostgresUrl, type DatabaseLeg } from './env.ts';

/** `migrated: false` leaves the schema to the work (to migrate up to a point first). */
export async function withReadModel(
  leg: DatabaseLeg,
  work: (readModel: ReadModel) => Promise<void>,
  { migrated = true }: { migrated?: boolean } = {},
): Promise<void> {
  const scratch = leg === 'postgresql' ? await createScratchPostgresDatabase(suitePostgresUrl()!) : undefined;
  const readModel = await initORM({
    databaseUrl: scratch?.url ?? join(mkdtempSync(join(tmpdir(), 'svc-db-')), 'svc.sqlite'),
  });
  try {
    if (migrated) await migrate(readModel);
    await work(readModel);
  } finally {
    await readModel.close();
    await scratch?.drop();
  }
}

export function snapshot(overrides: Partial<ReturnType<typeof initialRunSnapshot>> = {}) {
  const runId = newId('run');
  return {
    ...initialRunSnapshot({
      runId,
      createdAt: 1_795_000_000_123,
      agent: BUILTIN_AGENTS[0]!,
      projectId: null,
      prompt: 'echo hi',
      trigger: 'cli',
      seedId: null,
      ref: null,
      baseCommit: null,
      targetBranch: null,
      dispatcherHandle: null,
      sandbox: { id: `sbx-${runId}`, workspacePath: '/tmp/w' },
    }),
    ...overrides,
  };
}
