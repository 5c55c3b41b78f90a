// The event-mining reads of GET /analytics/behavior: what the agents of a scope's runs did, read
// from their run events (kinds, tool calls, the files their edit tools wrote) and their inbox.
// Every query aggregates in SQL over the events of the scope's runs (run_events by run_id and
// kind) and answers at most `limit` rows.
import type { DbDialect } from '../orm.ts';
import { EVENTS_OF_ROW_SQL } from '../run-event-chunks.ts';
import {
  editedPath,
  isEditToolCall,
  numberOrZero,
  payloadText,
  runsInScope,
  type AnalyticsScope,
  type ExecuteSql,
} from './analytics-sql.ts';

/**
 * The in-sandbox path of a run's workspace (SANDBOX_PATHS.workspace of sandbox/backends/bubblewrap.ts,
 * which db/ may not import): the tools' absolute paths start with it.
 */
export const SANDBOX_WORKSPACE = '/workspace/';
/** The directory key of files outside the workspace (/tmp, the home directory…). */
export const OUTSIDE_WORKSPACE = '(outside workspace)';

/** One row of a top-N list: its key (null: no value), its count, the runs it came from. */
export interface MinedRow {
  key: string | null;
  count: number;
  runs: number;
}

/** The top rows, and the total count over every row (not only the top ones). */
export interface MinedTop<Row extends MinedRow = MinedRow> {
  rows: Row[];
  total: number;
  /** How many distinct keys there were (the top rows are at most `limit` of them). */
  keys: number;
}

/** A directory's edits: tool calls that wrote a file below it, distinct files, runs. */
export interface DirectoryRow extends MinedRow {
  files: number;
}

export interface SteeringRow {
  messages: number;
  runs: number;
  delivered: number;
  unread: number;
  failed: number;
}

export class BehaviorQueries {
  readonly #dialect: () => DbDialect;
  readonly #execute: ExecuteSql;

  constructor(dialect: () => DbDialect, execute: ExecuteSql) {
    this.#dialect = dialect;
    this.#execute = execute;
  }

  /** The events of the scope's runs: `e` joined to the runs' ids. */
  #events(scope: AnalyticsScope) {
    const runs = runsInScope(scope);
    return { sql: `run_events e join (select r.id from ${runs.sql}) s on s.id = e.run_id`, params: runs.params };
  }

  /**
   * Top-N of `key` over `from` (rows with run_id, and rel when `files`): count(*) per key, distinct
   * runs (and files), and the totals over every key, by window functions before the limit.
   */
  async #top(key: string, from: { sql: string; params: unknown[]; weight?: string }, limit: number, files = false) {
    const distinctFiles = files ? ', count(distinct rel) as files' : '';
    // A row of `from` counts once, or as many as its weight column says (a chunk row's events).
    const n = from.weight ? `sum(${from.weight})` : 'count(*)';
    const rows = await this.#execute(
      `select ${key} as bucket, ${n} as n, count(distinct run_id) as runs${distinctFiles},
        sum(${n}) over () as total, count(*) over () as key_count
      from ${from.sql}
      group by bucket
      order by n desc, bucket
      limit ?`,
      [...from.params, limit],
    );
    return {
      rows: rows.map((row) => ({
        key: row.bucket === null || row.bucket === undefined ? null : String(row.bucket),
        count: numberOrZero(row.n),
        runs: numberOrZero(row.runs),
        files: numberOrZero(row.files),
      })),
      total: numberOrZero(rows[0]?.total),
      keys: numberOrZero(rows[0]?.key_count),
    };
  }

  /** Events per kind. */
  eventKinds(scope: AnalyticsScope, limit: number): Promise<MinedTop> {
    const events = this.#events(scope);
    return this.#top(
      'kind',
      {
        sql: `(select e.kind, e.run_id, ${EVENTS_OF_ROW_SQL} as events from ${events.sql}) k`,
        params: events.params,
        weight: 'events',
      },
      limit,
    );
  }

  /** Tool calls (`tool_use` events) per tool name. */
  tools(scope: AnalyticsScope, limit: number): Promise<MinedTop> {
    const events = this.#events(scope);
    const name = payloadText(this.#dialect(), ['name']);
    return this.#top(
      'tool',
      {
        sql: `(select ${name} as tool, e.run_id from ${events.sql} where e.kind = 'tool_use') t`,
        params: events.params,
      },
      limit,
    );
  }

  /**
   * Edit tool calls per directory: the first two levels of the written file's directory inside the
   * workspace (`api/routes`; `.` for its root), every path outside it as one key.
   */
  directories(scope: AnalyticsScope, limit: number): Promise<MinedTop<DirectoryRow>> {
    const events = this.#events(scope);
    const dialect = this.#dialect();
    const pos = (text: string) => (dialect === 'sqlite' ? `instr(${text}, '/')` : `strpos(${text}, '/')`);
    // The path after its first '/', and where that part's own first '/' is: the second level.
    const rest = `substr(p.rel, ${pos('p.rel')} + 1)`;
    const directory = `case when p.rel like '/%' then '${OUTSIDE_WORKSPACE}'
      when ${pos('p.rel')} = 0 then '.'
      when ${pos(rest)} = 0 then substr(p.rel, 1, ${pos('p.rel')} - 1)
      else substr(p.rel, 1, ${pos('p.rel')} + ${pos(rest)} - 1) end`;
    const workspace = SANDBOX_WORKSPACE;
    const inWorkspace = `case when x.path like '${workspace}%' then substr(x.path, ${workspace.length + 1})
      when x.path like './%' then substr(x.path, 3) else x.path end`;
    return this.#top(
      'directory',
      {
        sql: `(select p.run_id, p.rel, ${directory} as directory
          from (select x.run_id, ${inWorkspace} as rel
            from (select e.run_id, ${editedPath(dialect)} as path from ${events.sql}
              where ${isEditToolCall(dialect)}) x
            where x.path is not null) p) d`,
        params: events.params,
      },
      limit,
      true,
    );
  }

  /** The steering messages addressed to the scope's runs, by state. */
  async steering(scope: AnalyticsScope): Promise<SteeringRow> {
    const runs = runsInScope(scope);
    const [row = {}] = await this.#execute(
      `select count(*) as messages, count(distinct m.target_run_id) as runs,
        sum(case when m.state = 'delivered' then 1 else 0 end) as delivered,
        sum(case when m.state = 'unread' then 1 else 0 end) as unread,
        sum(case when m.state = 'failed' then 1 else 0 end) as failed
      from inbox_messages m join (select r.id from ${runs.sql}) s on s.id = m.target_run_id`,
      runs.params,
    );
    return {
      messages: numberOrZero(row.messages),
      runs: numberOrZero(row.runs),
      delivered: numberOrZero(row.delivered),
      unread: numberOrZero(row.unread),
      failed: numberOrZero(row.failed),
    };
  }
}
