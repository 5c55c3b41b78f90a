// Developer tool: writes a new migration for both dialects from the difference between the entities
// and a scratch database migrated to the latest committed migration.
//   node db/create-migration.ts <name> [postgres-url]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initORM, migrate } from './orm.ts';
import { withScratchPostgresDatabase } from './scratch-postgres.ts';

const name = process.argv[2];
const postgresUrl = process.argv[3] ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (!name) throw new Error('usage: node db/create-migration.ts <name> [postgres-url]');
const here = dirname(fileURLToPath(import.meta.url));

async function createFor(dialect: 'sqlite' | 'postgresql', databaseUrl: string): Promise<void> {
  const readModel = await initORM({ databaseUrl });
  try {
    await migrate(readModel);
    const result = await readModel.orm.migrator.create(join(here, 'migrations', dialect), false, false, name);
    console.log(`${dialect}: ${result.fileName || 'no changes'}`);
  } finally {
    await readModel.close();
  }
}

await createFor('sqlite', join(mkdtempSync(join(tmpdir(), 'svc-mig-')), 'db.sqlite'));
await withScratchPostgresDatabase(postgresUrl, (url) => createFor('postgresql', url));
