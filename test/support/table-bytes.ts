// The bytes the read model's run_events table takes: its rows, their out-of-line values (PostgreSQL's
// TOAST, SQLite's overflow pages) and its indexes.
import type { ReadModel } from '../../db/orm.ts';

export async function runEventsBytes(readModel: ReadModel): Promise<number> {
  if (readModel.dialect === 'postgresql') {
    const [row] = await readModel.rows<{ bytes: string }>("select pg_total_relation_size('run_events') as bytes", []);
    return Number(row!.bytes);
  }
  const [row] = await readModel.rows<{ bytes: number }>(
    `select sum(pgsize) as bytes from dbstat where name = 'run_events'
      or name in (select name from sqlite_master where type = 'index' and tbl_name = 'run_events')`,
    [],
  );
  return Number(row!.bytes);
}
