// The run row written as one plain statement: the projection writes it three times or more per run,
// on the run's critical path, and the ORM's insert and update (its data renamed to column names
// key by key, a query builder, a compiled query) cost more than the statement itself
// (docs/decisions/0022-read-model.md). The columns and how each value is stored come from the entity's metadata
// and the ORM's own types and platform, so the row stored is the one the ORM would store.
import type { EntityProperty, Platform } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/sql';
import { RunEntity } from '../../db/entities/index.ts';
import { withoutNul } from '../../db/nul.ts';

interface Column {
  quoted: string;
  store: (value: unknown) => unknown;
}

/** Per ORM (its metadata and platform): the run row's columns by property name. */
const columnsByPlatform = new WeakMap<Platform, Map<string, Column>>();

function runColumns(tx: EntityManager): Map<string, Column> {
  const platform = tx.getPlatform();
  let columns = columnsByPlatform.get(platform);
  if (columns) return columns;
  columns = new Map();
  for (const prop of Object.values(tx.getMetadata().find(RunEntity)!.properties) as EntityProperty[]) {
    if (!prop.fieldNames?.length || prop.persist === false) continue;
    columns.set(prop.name, { quoted: platform.quoteIdentifier(prop.fieldNames[0]!), store: storer(prop, platform) });
  }
  columnsByPlatform.set(platform, columns);
  return columns;
}

/**
 * How a property's value is stored: NUL replaced (an agent's text may reach the row: PostgreSQL
 * refuses NUL, db/nul.ts), its type's conversion, then the platform's for dates.
 */
function storer(prop: EntityProperty, platform: Platform): (value: unknown) => unknown {
  const type = prop.customType;
  return (raw) => {
    if (raw === null || raw === undefined) return null;
    const value = withoutNul(raw);
    const converted = type ? type.convertToDatabaseValue(value, platform, { mode: 'query-data' }) : value;
    return converted instanceof Date ? platform.processDateProperty(converted) : converted;
  };
}

/** The row's columns and stored values, for the properties it sets (undefined ones are left out). */
function assignments(tx: EntityManager, row: Record<string, unknown>): { quoted: string[]; values: unknown[] } {
  const columns = runColumns(tx);
  const quoted: string[] = [];
  const values: unknown[] = [];
  for (const [name, value] of Object.entries(row)) {
    const column = columns.get(name);
    if (!column || value === undefined) continue;
    quoted.push(column.quoted);
    values.push(column.store(value));
  }
  return { quoted, values };
}

/** Inserts a run row (every property it sets) in the caller's transaction. */
export async function insertRunRow(tx: EntityManager, row: Record<string, unknown>): Promise<void> {
  const { quoted, values } = assignments(tx, row);
  await tx
    .getConnection()
    .execute(
      `insert into runs (${quoted.join(', ')}) values (${quoted.map(() => '?').join(', ')})`,
      values,
      'run',
      tx.getTransactionContext(),
    );
}

/** Updates the run row `id` with every property `changes` sets, in the caller's transaction. */
export async function updateRunRow(tx: EntityManager, id: string, changes: Record<string, unknown>): Promise<void> {
  const { quoted, values } = assignments(tx, changes);
  if (quoted.length === 0) return;
  await tx
    .getConnection()
    .execute(
      `update runs set ${quoted.map((column) => `${column} = ?`).join(', ')} where id = ?`,
      [...values, id],
      'run',
      tx.getTransactionContext(),
    );
}
