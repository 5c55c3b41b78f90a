// Run use-cases behind the routes: dispatch (validate references, then start the workflow) and
// reads from the read model.
import { join } from 'node:path';
import { raw } from '@mikro-orm/core';
import { renderAgent } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { ProjectEntity, RunEntity, type Run } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { dataPaths } from '../../stack/config.ts';
import { Errors } from '../errors.ts';
import type { DispatchRunBody, ListRunsQuery } from '../routes/runs.schema.ts';
import type { AgentCatalog } from './agent-catalog.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

export interface RunsServiceDeps {
  readModel: ReadModel;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  dataDir: string;
}

export class RunsService {
  readonly #deps: RunsServiceDeps;

  constructor(deps: RunsServiceDeps) {
    this.#deps = deps;
  }

  async dispatch(body: DispatchRunBody): Promise<{ run: RunSnapshot; sandbox: { id: string; workspacePath: string } }> {
    const agent = this.#deps.agents.get(body.agent);
    if (!agent) throw Errors.notFound(`agent "${body.agent}"`, 'GET /agents lists the agents this server knows');
    const projectId = body.project ?? null;
    if (projectId && !(await this.#deps.readModel.em().findOne(ProjectEntity, { id: projectId }))) {
      throw Errors.notFound(`project "${projectId}"`, 'GET /projects lists registered projects');
    }
    const runId = newId('run');
    const sandbox = { id: `sbx-${runId}`, workspacePath: join(dataPaths.workspaces(this.#deps.dataDir), runId) };
    const rendered = renderAgent(agent, {
      providerOverride: body.providerOverride ?? null,
      modelOverride: body.modelOverride ?? null,
      maxCostUsd: body.maxCostUsd ?? null,
    });
    const run = await this.#deps.temporal.startRun({
      runId,
      createdAt: Date.now(),
      agent: rendered,
      projectId,
      prompt: body.prompt,
      trigger: body.trigger ?? 'manual',
      seedId: body.seedId ?? null,
      ref: body.ref ?? null,
      baseCommit: body.baseCommit ?? null,
      targetBranch: body.targetBranch ?? null,
      dispatcherHandle: body.dispatcherHandle ?? null,
      sandbox,
    });
    return { run, sandbox };
  }

  async get(id: string): Promise<Run> {
    const run = await this.#deps.readModel.em().findOne(RunEntity, { id });
    if (!run) throw Errors.notFound(`run "${id}"`);
    return run;
  }

  async list(query: ListRunsQuery) {
    const where = { ...(query.project ? { projectId: query.project } : {}), ...(query.agent ? { agentName: query.agent } : {}) };
    const em = this.#deps.readModel.em();
    const orderBy = query.sort === 'cost' ? { costUsd: query.dir, createdAt: query.dir, id: query.dir } : { createdAt: query.dir, id: query.dir };
    const [runs, total] = await em.findAndCount(RunEntity, where, { orderBy, limit: query.limit, offset: query.offset });
    const cost = await em
      .createQueryBuilder(RunEntity)
      .select([raw('count(cost_usd) as priced'), raw('sum(cost_usd) as total')])
      .where(where)
      .execute<{ priced: number | string; total: number | string | null }>('get');
    const costPricedCount = Number(cost?.priced ?? 0);
    const costTotalUsd = costPricedCount > 0 ? Number(cost!.total) : null;
    return { runs, total, limit: query.limit, offset: query.offset, costTotalUsd, costPricedCount };
  }
}
