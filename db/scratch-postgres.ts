// A throw-away PostgreSQL database next to the one a URL names: used by tests and by the migration
// tool so that nothing they do touches a real database.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function databaseUrlWithName(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function createScratchPostgresDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const database = `svc_scratch_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrlWithName(baseUrl, database),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${database} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function withScratchPostgresDatabase<T>(baseUrl: string, work: (url: string) => Promise<T>): Promise<T> {
  const scratch = await createScratchPostgresDatabase(baseUrl);
  try {
    return await work(scratch.url);
  } finally {
    await scratch.drop();
  }
}
