// `svc db migrate-to-postgres`: a one-shot copy of the embedded SQLite read model into an empty
// PostgreSQL database. The target gets its schema from svc's own PostgreSQL migrations, never from
// the source; rows then go across table by table in batches, converted column by column from the
// entities' metadata, because SQLite keeps booleans as 0/1, dates as epoch milliseconds and JSON
// as text. Everything is copied in one PostgreSQL transaction: after a failure the target has
// svc's schema and no rows, which counts as empty, so the command can simply be run again.
import type { EntityManager } from '@mikro-orm/sql';
import pg from 'pg';
import { migrationsFor } from './migrations/index.ts';
import { dialectOf, initORM, migrate, type ReadModel } from './orm.ts';
import { converterFor, withNulCheck } from './sqlite-values.ts';

/** The migrator's bookkeeping table: the target writes its own, so it is never copied. */
const MIGRATIONS_TABLE = 'svc_migrations';
/** PostgreSQL's limit on the parameters of one statement. */
const MAX_PARAMETERS = 65_535;

/** A refusal the operator can act on: printed as `svc: [code] message` with its hint. */
export class MigrationRefusedError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  constructor(code: string, message: string, hint?: string) {
    super(message);
    this.code = code;
    this.hint = hint;
  }
}

export interface CopyProgress {
  table: string;
  copied: number;
  total: number;
  /** Since this table's copy began. */
  elapsedMs: number;
}

export interface MigrationOptions {
  /** The SQLite file (an svc read model at this version's schema). */
  from: string;
  /** A postgres:// URL naming an empty database. */
  to: string;
  /** Rows read and written per batch (default 1000). */
  batchSize?: number;
  /** Called after every batch of every table (once with 0 rows for an empty one). */
  onProgress?(progress: CopyProgress): void;
}

export interface MigrationReport {
  tables: { table: string; rows: number }[];
  /** `table.column` of every serial column whose sequence now starts after the copied ids. */
  sequences: string[];
  /** The PostgreSQL migrations applied to the target before the copy. */
  migrations: string[];
  /** NUL characters PostgreSQL cannot store in text or JSON, replaced by U+FFFD. */
  replacedNulCharacters: number;
}

/** Tables the target's own triggers build as the rows they derive from arrive: never copied. */
const DERIVED_TABLES = new Set(['run_totals']);

interface ColumnPlan {
  name: string;
  convert(value: unknown): unknown;
}

interface TablePlan {
  table: string;
  columns: ColumnPlan[];
}

/** The URL with its password masked, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;
const listed = (names: string[]) => names.slice(0, 5).join(', ') + (names.length > 5 ? ', …' : '');

/** Copies the SQLite read model at `from` into the empty PostgreSQL database at `to`. */
export async function migrateSqliteToPostgres(options: MigrationOptions): Promise<MigrationReport> {
  if (dialectOf(options.to) !== 'postgresql')
    throw new MigrationRefusedError('usage', `not a postgres:// URL: ${options.to}`);
  const batchSize = options.batchSize ?? 1000;
  const source = await initORM({ databaseUrl: options.from });
  const target = new pg.Client({ connectionString: options.to });
  try {
    const plans = tablePlans(source);
    await checkSourceSchema(source, plans);
    await target.connect().catch((error: Error) => {
      throw new MigrationRefusedError(
        'target_unreachable',
        `cannot connect to ${redactUrl(options.to)}: ${error.message}`,
      );
    });
    // Before the migrations: a database holding someone else's tables must not receive svc's.
    await refuseNonEmptyTarget(target, plans);
    const migrations = await migrateTarget(options.to);
    const nul = { replaced: 0 };
    for (const plan of plans) for (const column of plan.columns) column.convert = withNulCheck(column.convert, nul);
    // One read transaction on SQLite: every table is copied from the same snapshot.
    return await source.em().transactional(async (em) => {
      await target.query('begin');
      try {
        // Nobody writes between the emptiness check and the commit.
        await target.query(`lock table ${plans.map((plan) => quote(plan.table)).join(', ')} in exclusive mode`);
        await refuseNonEmptyTarget(target, plans);
        const tables = [];
        for (const plan of plans)
          if (!DERIVED_TABLES.has(plan.table))
            tables.push(await copyTable(em, target, plan, batchSize, options.onProgress));
        const sequences = await resetSequences(target, plans);
        await target.query('commit');
        // A bulk-loaded table has no planner statistics until autovacuum comes by: without them
        // the analytics queries sort instead of walking their indexes (docs/operations.md).
        await target.query(`analyze ${plans.map((plan) => quote(plan.table)).join(', ')}`);
        return { tables, sequences, migrations, replacedNulCharacters: nul.replaced };
      } catch (error) {
        await target.query('rollback').catch(() => {});
        throw error;
      }
    });
  } finally {
    await target.end().catch(() => {});
    await source.close();
  }
}

/** The source must be an svc read model at exactly this version's schema. */
async function checkSourceSchema(source: ReadModel, plans: TablePlan[]): Promise<void> {
  const tables = (await source.em().getConnection().execute(`select name from sqlite_master where type = 'table'`)) as {
    name: string;
  }[];
  if (!tables.some((table) => table.name === MIGRATIONS_TABLE))
    throw new MigrationRefusedError(
      'source_not_svc',
      `${source.databaseUrl} is not an svc read model (it has no ${MIGRATIONS_TABLE} table)`,
      'give --from the svc.sqlite of an svc data directory',
    );
  const applied = new Set(
    ((await source.em().getConnection().execute(`select name from ${MIGRATIONS_TABLE}`)) as { name: string }[]).map(
      (row) => row.name,
    ),
  );
  const known = migrationsFor('sqlite').map((migration) => migration.name);
  const unknown = [...applied].filter((name) => !known.includes(name));
  if (unknown.length)
    throw new MigrationRefusedError(
      'source_newer',
      `the SQLite database was migrated by a newer svc (${unknown.join(', ')})`,
      'run the migration with the svc version that last served this database',
    );
  const pending = known.filter((name) => !applied.has(name));
  // Left untouched rather than migrated here, so the source stays exactly what the old svc wrote.
  if (pending.length)
    throw new MigrationRefusedError(
      'source_outdated',
      `the SQLite database lacks ${pending.length} migration(s) of this svc version (${pending.join(', ')})`,
      'start this svc version on it once (`svc serve` migrates on start), stop it, then migrate',
    );
  // A table no entity describes would be left behind without a word: refuse instead.
  const extra = tables
    .map((table) => table.name)
    .filter((name) => name !== MIGRATIONS_TABLE && !name.startsWith('sqlite_'))
    .filter((name) => !plans.some((plan) => plan.table === name));
  if (extra.length)
    throw new MigrationRefusedError(
      'source_schema_mismatch',
      `the SQLite database has tables svc's entities do not describe (${listed(extra)})`,
      'remove them, or migrate with the svc version that made them',
    );
}

/** One plan per entity table, its columns and their conversions read from the entity metadata. */
function tablePlans(source: ReadModel): TablePlan[] {
  const plans: TablePlan[] = [];
  for (const meta of source.orm.getMetadata().getAll().values()) {
    if (meta.embeddable || meta.virtual || !meta.tableName) continue;
    const columns = meta.props
      .filter((prop) => prop.kind === 'scalar' && prop.persist !== false && prop.fieldNames?.length === 1)
      .map((prop) => ({ name: prop.fieldNames[0]!, convert: converterFor(prop) }));
    plans.push({ table: meta.tableName, columns });
  }
  return plans.sort((a, b) => a.table.localeCompare(b.table));
}

async function refuseNonEmptyTarget(target: pg.Client, plans: TablePlan[]): Promise<void> {
  const ours = new Set([MIGRATIONS_TABLE, ...plans.map((plan) => plan.table)]);
  const { rows } = await target.query<{ name: string }>(
    `select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`,
  );
  const foreign = rows.map((row) => row.name).filter((name) => !ours.has(name));
  if (foreign.length)
    throw new MigrationRefusedError(
      'target_not_empty',
      `the target database has tables svc does not own (${listed(foreign)})`,
      'create an empty database for svc (createdb svc) and pass its URL to --to',
    );
  const filled: string[] = [];
  for (const plan of plans) {
    if (!rows.some((row) => row.name === plan.table)) continue;
    const { rows: any } = await target.query(`select exists (select 1 from ${quote(plan.table)}) as filled`);
    if (any[0]?.filled) filled.push(plan.table);
  }
  if (filled.length)
    throw new MigrationRefusedError(
      'target_not_empty',
      `the target database already holds svc data (${listed(filled)}): the copy goes into an empty database only`,
      'drop and recreate the target database, or give --to a new one',
    );
}

async function migrateTarget(url: string): Promise<string[]> {
  const readModel = await initORM({ databaseUrl: url });
  try {
    return await migrate(readModel);
  } finally {
    await readModel.close();
  }
}

async function copyTable(
  em: EntityManager,
  target: pg.Client,
  plan: TablePlan,
  batchSize: number,
  onProgress: MigrationOptions['onProgress'],
): Promise<{ table: string; rows: number }> {
  const ctx = em.getTransactionContext();
  const read = async (sql: string) => (await em.getConnection().execute(sql, [], 'all', ctx)) as any[];
  const present = new Set((await read(`pragma table_info(${quote(plan.table)})`)).map((column) => column.name));
  const unmapped = [...present].filter((name) => !plan.columns.some((column) => column.name === name));
  const missing = plan.columns.filter((column) => !present.has(column.name)).map((column) => column.name);
  if (unmapped.length || missing.length)
    throw new MigrationRefusedError(
      'source_schema_mismatch',
      `table ${plan.table} does not match svc's entities (unknown columns: ${unmapped.join(', ') || 'none'}; ` +
        `missing: ${missing.join(', ') || 'none'})`,
    );
  const started = Date.now();
  const total = Number((await read(`select count(*) as n from ${quote(plan.table)}`))[0].n);
  const columnList = plan.columns.map((column) => quote(column.name)).join(', ');
  const rowsPerInsert = Math.max(1, Math.min(batchSize, Math.floor(MAX_PARAMETERS / plan.columns.length)));
  let copied = 0;
  let lastRowid = -Infinity;
  for (;;) {
    // Keyset pagination on rowid: every batch costs the same however deep into the table it is.
    const rows = await read(
      `select rowid as "__svc_rowid", ${columnList} from ${quote(plan.table)}` +
        `${copied ? ` where rowid > ${lastRowid}` : ''} order by rowid limit ${batchSize}`,
    );
    if (!rows.length) {
      if (!total) onProgress?.({ table: plan.table, copied, total, elapsedMs: Date.now() - started });
      break;
    }
    for (let start = 0; start < rows.length; start += rowsPerInsert) {
      const chunk = rows.slice(start, start + rowsPerInsert);
      const values: unknown[] = [];
      const tuples = chunk.map((row) => {
        const placeholders = plan.columns.map((column) => {
          try {
            values.push(column.convert(row[column.name]));
          } catch (error) {
            throw new Error(`${plan.table}.${column.name} (rowid ${row.__svc_rowid}): ${(error as Error).message}`);
          }
          return `$${values.length}`;
        });
        return `(${placeholders.join(', ')})`;
      });
      await target.query(`insert into ${quote(plan.table)} (${columnList}) values ${tuples.join(', ')}`, values);
    }
    copied += rows.length;
    lastRowid = Number(rows.at(-1).__svc_rowid);
    onProgress?.({ table: plan.table, copied, total, elapsedMs: Date.now() - started });
  }
  const { rows: counted } = await target.query(`select count(*) as n from ${quote(plan.table)}`);
  const written = Number(counted[0].n);
  if (written !== total || copied !== total)
    throw new Error(`${plan.table}: ${total} rows in SQLite, ${copied} read, ${written} in PostgreSQL`);
  return { table: plan.table, rows: written };
}

/** Serial columns: their sequences would hand out ids the copy already used. */
async function resetSequences(target: pg.Client, plans: TablePlan[]): Promise<string[]> {
  const { rows } = await target.query<{ table_name: string; column_name: string; sequence: string | null }>(
    `select table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) as sequence
       from information_schema.columns
      where table_schema = current_schema() and table_name = any($1)
        and (column_default like 'nextval(%' or is_identity = 'YES')
      order by table_name, column_name`,
    [plans.map((plan) => plan.table)],
  );
  const reset: string[] = [];
  for (const row of rows) {
    if (!row.sequence) continue;
    await target.query(
      `select setval($1, coalesce((select max(${quote(row.column_name)}) from ${quote(row.table_name)}), 0) + 1,
        false)`,
      [row.sequence],
    );
    reset.push(`${row.table_name}.${row.column_name}`);
  }
  return reset;
}
