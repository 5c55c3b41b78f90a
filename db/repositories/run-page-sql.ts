// A page of runs for GET /runs, read as plain rows: the page is presented and dropped, so the unit
// of work's entities, identity map and change tracking buy nothing there, and building the query
// through the ORM cost more than running it (docs/decisions/0022-read-model.md: ~4 ms against a 0.15 ms query).
// The SQL is a fixed shape, its values handed to the connection apart from it (which quotes them,
// as for the ORM's own queries); the columns and their conversions come from the entity's
// metadata, so a new column needs nothing here.
import { runSchema, type RunJson } from '../../core/run-schema.ts';
import { RunEntity, type Run } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';
import type { RunState } from '../../core/run-states.ts';

/** Which runs a page shows: a project's, an agent's, or (a spectator's view) only those of some projects. */
export interface RunFilter {
  projectId?: string;
  agentName?: string;
  /** Only runs in one of these states. */
  states?: RunState[];
  /** Limits the page to these projects (a spectator's visible ones). */
  onlyProjects?: Set<string>;
}

export interface RunPage {
  sort: 'started' | 'cost';
  dir: 'asc' | 'desc';
  limit: number;
  offset: number;
}

interface Column {
  property: string;
  field: string;
  convert: 'json' | 'number' | 'date' | null;
}

const CONVERSIONS = {
  json: (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value),
  number: (value: unknown) => Number(value),
  date: (value: unknown) => (value instanceof Date ? value : new Date(value as string)),
};

/** How a column's stored value becomes the entity property's (what hydration would do for these types). */
function conversionOf(type: string, runtimeType: string): Column['convert'] {
  if (type === 'JsonType') return 'json';
  if (type === 'BigIntType' || type === 'DoubleType') return 'number';
  return runtimeType === 'Date' ? 'date' : null;
}

/** A run as a page of GET /runs reads it: the spec's fields (core/run-schema.ts), as the entity types them. */
export type ListedRun = Pick<Run, keyof RunJson & keyof Run>;

let reader: { columns: Column[]; read: (row: Record<string, unknown>) => ListedRun } | null = null;

/**
 * The page's columns and a row → ListedRun function compiled from the entity's metadata (as MikroORM compiles
 * its own mappers): one object literal of a fixed shape per row, ~10× cheaper than adding ~50
 * properties one by one. The code holds only the entity's own property and column names.
 */
function runReader(readModel: ReadModel) {
  if (reader) return reader;
  const columns: Column[] = readModel.orm
    .getMetadata()
    .get(RunEntity)
    // Only what the page shows: the spec's Run fields (not the service's bookkeeping columns).
    .props.filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false && prop.name in runSchema.shape)
    .map((prop) => ({
      property: prop.name,
      field: prop.fieldNames[0]!,
      convert: conversionOf(prop.customType?.constructor.name ?? '', prop.runtimeType),
    }));
  const entries = columns.map(({ property, field, convert }) => {
    const value = `row[${JSON.stringify(field)}] ?? null`;
    const converted = convert ? `(${value}) === null ? null : c.${convert}(${value})` : value;
    return `${JSON.stringify(property)}: ${converted}`;
  });
  const compiled = new Function('c', `return (row) => ({ ${entries.join(', ')} });`) as (
    conversions: typeof CONVERSIONS,
  ) => (row: Record<string, unknown>) => ListedRun;
  reader = { columns, read: compiled(CONVERSIONS) };
  return reader;
}

/** The WHERE clause and its parameters for a filter over `runs` (or, with `projectColumn`, run_totals). */
export function runFilterSql(filter: RunFilter, projectColumn: 'project_id' | 'project_key') {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const oneOf = (column: string, values: unknown[]) => {
    clauses.push(values.length ? `"${column}" in (${values.map(() => '?').join(', ')})` : '1 = 0');
    params.push(...values);
  };
  if (filter.projectId) {
    clauses.push(`"${projectColumn}" = ?`);
    params.push(filter.projectId);
  }
  if (filter.agentName) {
    clauses.push('"agent_name" = ?');
    params.push(filter.agentName);
  }
  if (filter.states?.length) oneOf('state', filter.states);
  if (filter.onlyProjects) oneOf(projectColumn, [...filter.onlyProjects]);
  return { where: clauses.length ? `where ${clauses.join(' and ')}` : '', params };
}

/** The total and the cost over every matching run, from the per-group totals the database keeps. */
export interface RunTotals {
  total: number;
  costTotalUsd: number | null;
  costPricedCount: number;
}

const TOTALS = ['matched', 'priced', 'cost'] as const;
const TOTAL_COLUMNS = { matched: 'runs', priced: 'priced', cost: 'cost_nanos' } as const;

function totalsOf(row: Record<string, unknown> | undefined): RunTotals {
  const costPricedCount = Number(row?.svc_priced ?? 0);
  return {
    total: Number(row?.svc_matched ?? 0),
    costTotalUsd: costPricedCount > 0 ? Number(row!.svc_cost) / 1e9 : null,
    costPricedCount,
  };
}

/**
 * One page of runs, in the page's order, as ListedRuns (not managed entities), with the totals over
 * every matching run. One statement: the page's runs beside one row of totals (a derived table the
 * database computes once, and a join keeps the index's order); a page past the end asks for the
 * totals on their own.
 */
export async function readRunPage(readModel: ReadModel, filter: RunFilter, page: RunPage) {
  const { columns: all, read } = runReader(readModel);
  const runs = runFilterSql(filter, 'project_id');
  const totals = runFilterSql(filter, 'project_key');
  const sums = TOTALS.map((name) => `sum("${TOTAL_COLUMNS[name]}") as "svc_${name}"`).join(', ');
  const totalsSql = `select ${sums} from "run_totals" ${totals.where}`;
  const dir = page.dir === 'asc' ? 'asc' : 'desc';
  const order = (page.sort === 'cost' ? ['cost_usd', 'created_at', 'id'] : ['created_at', 'id'])
    .map((column) => `"runs"."${column}" ${dir}`)
    .join(', ');
  const columns = [...all.map((column) => `"runs"."${column.field}"`), '"svc_totals".*'].join(', ');
  const rows = await readModel.rows(
    `select ${columns} from "runs" cross join (${totalsSql}) as "svc_totals" ${runs.where}` +
      ` order by ${order} limit ? offset ?`,
    [...totals.params, ...runs.params, page.limit, page.offset],
  );
  const [first] = rows.length ? rows : await readModel.rows(totalsSql, totals.params);
  return { runs: rows.map(read), ...totalsOf(first) };
}
