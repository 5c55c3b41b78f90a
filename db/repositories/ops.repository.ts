// The aggregates behind GET /ops/overview and the svc_* gauges of GET /metrics, in SQL on either
// dialect: counts per state, spend and delivery over a window, and the totals of every run.
import { raw } from '@mikro-orm/core';
import { RUN_STATES, type RunState } from '../../core/run-states.ts';
import { RetentionPassEntity, RunEntity, type RetentionPass } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** Which runs an aggregate covers: those created since `since` (epoch ms), in `onlyProjects` when given. */
export interface OpsScope {
  since?: number;
  onlyProjects?: Set<string>;
}

type Numeric = number | string | null;
const num = (value: Numeric | undefined): number => Number(value ?? 0);

export class OpsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  #where(scope: OpsScope) {
    return {
      ...(scope.since !== undefined ? { createdAt: { $gte: scope.since } } : {}),
      ...(scope.onlyProjects ? { projectId: { $in: [...scope.onlyProjects] } } : {}),
    };
  }

  /** Each data directory's last retention pass, the latest first. */
  lastRetentionPasses(): Promise<RetentionPass[]> {
    return this.#readModel.em().find(RetentionPassEntity, {}, { orderBy: { finishedAt: 'desc' }, limit: 100 });
  }

  /** Runs per state (every state present, zero when none). */
  async runsByState(scope: OpsScope): Promise<Record<RunState, number>> {
    const rows = await this.#readModel
      .em()
      .createQueryBuilder(RunEntity)
      .select(['state', raw('count(*) as runs')])
      .where(this.#where(scope))
      .groupBy('state')
      .execute<{ state: RunState; runs: Numeric }[]>('all');
    const counts = Object.fromEntries(RUN_STATES.map((state) => [state, 0])) as Record<RunState, number>;
    for (const row of rows) counts[row.state] = num(row.runs);
    return counts;
  }

  /** Spend, tokens and delivery of the runs in scope. */
  async totals(scope: OpsScope) {
    const row = await this.#readModel
      .em()
      .createQueryBuilder(RunEntity)
      .select([
        raw('count(*) as runs'),
        raw('count(cost_usd) as priced'),
        raw('sum(cost_usd) as cost_usd'),
        raw('sum(tokens_input) as tokens_input'),
        raw('sum(tokens_output) as tokens_output'),
        raw('sum(case when commits_ahead > 0 and branch is not null then 1 else 0 end) as branches_pushed'),
        raw('sum(case when pr_url is not null then 1 else 0 end) as prs_opened'),
        raw("sum(case when pr_state = 'merged' then 1 else 0 end) as prs_merged"),
      ])
      .where(this.#where(scope))
      .execute<Record<string, Numeric>>('get');
    return {
      runs: num(row?.runs),
      priced: num(row?.priced),
      costUsd: num(row?.cost_usd),
      tokensInput: num(row?.tokens_input),
      tokensOutput: num(row?.tokens_output),
      branchesPushed: num(row?.branches_pushed),
      prsOpened: num(row?.prs_opened),
      prsMerged: num(row?.prs_merged),
    };
  }
}
