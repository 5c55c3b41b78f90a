import { Migration } from '@mikro-orm/migrations';

// run_totals is kept by a trigger on runs (db/entities/run-total.entity.ts): a run's old group
// loses it, its new group gains it, in the statement that changes it. Costs are held within
// [0, 1e6] USD as svc records usage (activities/runtimes/types.ts): no row can overflow a total. Groups are locked in the
// order old, new; runs only move forward through their states, so two never wait on each other.
const totalsFunction = `create function svc_run_totals() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    update run_totals set runs = runs - 1, priced = priced - (old.cost_usd is not null)::int,
        cost_nanos = cost_nanos - coalesce(round(least(greatest(old.cost_usd, 0), 1000000) * 1000000000)::bigint, 0)
      where project_key = coalesce(old.project_id, '') and agent_name = old.agent_name and state = old.state;
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    insert into run_totals (project_key, agent_name, state, runs, priced, cost_nanos)
      values (coalesce(new.project_id, ''), new.agent_name, new.state, 1, (new.cost_usd is not null)::int,
        coalesce(round(least(greatest(new.cost_usd, 0), 1000000) * 1000000000)::bigint, 0))
      on conflict (project_key, agent_name, state) do update set runs = run_totals.runs + 1,
        priced = run_totals.priced + excluded.priced, cost_nanos = run_totals.cost_nanos + excluded.cost_nanos;
  end if;
  return null;
end $$;`;

export class Migration20261125015719_run_totals extends Migration {
  override name = 'Migration20261125015719_run_totals';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "run_totals" ("project_key" varchar(32) not null, "agent_name" varchar(255) not null, "state" varchar(16) not null, "runs" bigint not null, "priced" bigint not null, "cost_nanos" bigint not null, primary key ("project_key", "agent_name", "state"));`,
    );
    // An older worker writing meanwhile must land before the backfill or after the trigger.
    this.addSql(`lock table runs in share row exclusive mode;`);
    this.addSql(`insert into run_totals (project_key, agent_name, state, runs, priced, cost_nanos)
      select coalesce(project_id, ''), agent_name, state, count(*), count(cost_usd),
        coalesce(sum(round(least(greatest(cost_usd, 0), 1000000) * 1000000000)::bigint), 0)
      from runs group by 1, 2, 3;`);
    this.addSql(totalsFunction);
    this.addSql(`create trigger run_totals after insert or delete or update of project_id, agent_name, state, cost_usd
      on runs for each row execute function svc_run_totals();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists run_totals on runs;`);
    this.addSql(`drop function if exists svc_run_totals();`);
    this.addSql(`drop table if exists "run_totals" cascade;`);
  }
}
