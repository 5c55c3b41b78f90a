// The read model's single entry point: initORM(overrides) opens SQLite (the embedded default) or
// PostgreSQL (production) with the same entities; schema changes come only from migrations.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { EntityManager } from '@mikro-orm/sql';
import { ALL_ENTITIES } from './entities/index.ts';
import { migrationsFor } from './migrations/index.ts';
import { withFileLock } from '../platform/file-lock.ts';
import type { DbDialect } from './dialect.ts';

export type { DbDialect } from './dialect.ts';

export interface OrmSettings {
  /** `postgres://…` / `postgresql://…` selects PostgreSQL; anything else is a SQLite file path. */
  databaseUrl: string;
  debug?: boolean;
}

export interface ReadModel {
  orm: MikroORM;
  dialect: DbDialect;
  databaseUrl: string;
  /** A fresh, request-scoped entity manager. Never share one across concurrent work. */
  em(): EntityManager;
  /**
   * Rows of a read that builds no entities, on the shared connection: no entity manager to fork
   * (a fork per request costs more than a small query). Values as the driver returns them.
   */
  rows<T = Record<string, unknown>>(sql: string, params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export function dialectOf(databaseUrl: string): DbDialect {
  return /^postgres(ql)?:\/\//i.test(databaseUrl) ? 'postgresql' : 'sqlite';
}

/** The dialect an entity manager talks to (for the few statements that differ, e.g. NOTIFY). */
export function dialectOfEm(em: EntityManager): DbDialect {
  // Only PostgreSQL is configured by URL (ormOptions).
  return dialectOf(String(em.config.get('clientUrl') ?? ''));
}

/** Only the dialect's own driver is loaded: the other one's code would sit in every process's memory. */
async function connectionOptions(settings: OrmSettings): Promise<Partial<Options>> {
  if (dialectOf(settings.databaseUrl) === 'postgresql') {
    const { PostgreSqlDriver } = await import('@mikro-orm/postgresql');
    return { driver: PostgreSqlDriver, clientUrl: settings.databaseUrl };
  }
  const { SqliteDriver } = await import('@mikro-orm/sqlite');
  return { driver: SqliteDriver, dbName: settings.databaseUrl };
}

async function ormOptions(settings: OrmSettings, overrides: Partial<Options> = {}): Promise<Options> {
  const dialect = dialectOf(settings.databaseUrl);
  const connection = await connectionOptions(settings);
  return {
    ...connection,
    entities: ALL_ENTITIES,
    extensions: [Migrator],
    migrations: {
      migrationsList: migrationsFor(dialect),
      tableName: 'svc_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    // svc's triggers and their functions (run_totals) are written by hand in the migrations, the
    // schema's one source: the entity diff must not take them for something to drop.
    schemaGenerator: { ignoreTriggers: true, ignoreRoutines: true },
    debug: settings.debug ?? false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    ...overrides,
  } as Options;
}

export async function initORM(settings: OrmSettings, overrides: Partial<Options> = {}): Promise<ReadModel> {
  const dialect = dialectOf(settings.databaseUrl);
  if (dialect === 'sqlite' && settings.databaseUrl !== ':memory:')
    mkdirSync(dirname(settings.databaseUrl), { recursive: true });
  const orm = await MikroORM.init(await ormOptions(settings, overrides));
  if (dialect === 'sqlite') {
    // WAL lets the API read while a worker's activity writes; busy_timeout absorbs short lock waits.
    const connection = (orm.em as unknown as EntityManager).getConnection();
    await connection.execute('pragma journal_mode = wal');
    await connection.execute('pragma busy_timeout = 5000');
    await connection.execute('pragma foreign_keys = on');
  }
  return {
    orm,
    dialect,
    databaseUrl: settings.databaseUrl,
    em: () => orm.em.fork() as unknown as EntityManager,
    rows: (sql, params) => (orm.em as unknown as EntityManager).getConnection().execute(sql, params, 'all'),
    close: () => orm.close(true),
  };
}

/**
 * Applies every pending migration; safe to call on every start and from several processes at
 * once (an API and a worker starting together): PostgreSQL serialises them with a transaction-scoped
 * advisory lock, SQLite with the kernel's flock on a file next to the database.
 */
export async function migrate(readModel: ReadModel): Promise<string[]> {
  const up = async () => (await readModel.orm.migrator.up()).map((m) => m.name);
  if (readModel.dialect === 'sqlite') {
    const file = String(readModel.orm.config.get('dbName'));
    return file === ':memory:' ? up() : withFileLock(`${file}.migrate.lock`, 'exclusive', up);
  }
  return readModel.em().transactional(async (tx) => {
    await tx
      .getConnection()
      .execute('select pg_advisory_xact_lock(hashtext(?))', ['svc:migrations'], 'all', tx.getTransactionContext());
    return up();
  });
}
