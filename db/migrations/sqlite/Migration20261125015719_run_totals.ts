import { Migration } from '@mikro-orm/migrations';

// run_totals is kept by triggers on runs (db/entities/run-total.entity.ts): a run's old group
// loses it, its new group gains it, in the statement that changes it.
const key = (row: 'new' | 'old') => `coalesce(${row}.project_id, ''), ${row}.agent_name, ${row}.state`;
// Held within [0, 1e6] USD as svc records usage (activities/runtimes/types.ts): no row, however it
// was written, can overflow a total.
const nanos = (row: 'new' | 'old') =>
  `coalesce(cast(round(min(max(${row}.cost_usd, 0), 1000000) * 1000000000) as integer), 0)`;
const gain = `insert into run_totals (project_key, agent_name, state, runs, priced, cost_nanos)
  values (${key('new')}, 1, new.cost_usd is not null, ${nanos('new')})
  on conflict (project_key, agent_name, state) do update set runs = runs + 1,
    priced = priced + excluded.priced, cost_nanos = cost_nanos + excluded.cost_nanos;`;
const loss = `update run_totals set runs = runs - 1, priced = priced - (old.cost_usd is not null),
    cost_nanos = cost_nanos - ${nanos('old')}
  where project_key = coalesce(old.project_id, '') and agent_name = old.agent_name and state = old.state;`;

export class Migration20261125015719_run_totals extends Migration {
  override name = 'Migration20261125015719_run_totals';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`run_totals\` (\`project_key\` text not null, \`agent_name\` text not null, \`state\` text not null, \`runs\` bigint not null, \`priced\` bigint not null, \`cost_nanos\` bigint not null, primary key (\`project_key\`, \`agent_name\`, \`state\`));`,
    );
    this.addSql(`insert into run_totals (project_key, agent_name, state, runs, priced, cost_nanos)
      select coalesce(project_id, ''), agent_name, state, count(*), count(cost_usd),
        coalesce(sum(cast(round(min(max(cost_usd, 0), 1000000) * 1000000000) as integer)), 0)
      from runs group by 1, 2, 3;`);
    this.addSql(`create trigger run_totals_insert after insert on runs begin ${gain} end;`);
    this.addSql(`create trigger run_totals_delete after delete on runs begin ${loss} end;`);
    this.addSql(`create trigger run_totals_update after update of project_id, agent_name, state, cost_usd on runs
      begin ${loss} ${gain} end;`);
  }

  override down(): void | Promise<void> {
    for (const trigger of ['insert', 'delete', 'update']) this.addSql(`drop trigger if exists run_totals_${trigger};`);
    this.addSql(`drop table if exists \`run_totals\`;`);
  }
}
