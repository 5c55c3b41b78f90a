// The types of the answers the CLI reads, inferred from the same zod schemas that generate the
// OpenAPI document: a change to a response shape is a type error here, not a surprise at run time.
import type { z } from 'zod';
import type {
  cancelPlanRunResponse,
  createPlanRunResponse,
  getPlanRunResponse,
  listPlanRunsResponse,
} from '../../api/routes/plan-runs.schema.ts';
import type { agentsResponse } from '../../api/routes/catalog.schema.ts';
import type { initResponse, migrateResponse, projectResponse } from '../../api/routes/projects.schema.ts';
import type { dispatchRunResponse, getRunResponse } from '../../api/routes/runs.schema.ts';

export type DispatchRunResponse = z.output<typeof dispatchRunResponse>;
export type GetRunResponse = z.output<typeof getRunResponse>;
export type CreatePlanRunResponse = z.output<typeof createPlanRunResponse>;
export type GetPlanRunResponse = z.output<typeof getPlanRunResponse>;
export type ListPlanRunsResponse = z.output<typeof listPlanRunsResponse>;
export type CancelPlanRunResponse = z.output<typeof cancelPlanRunResponse>;
export type ProjectResponse = z.output<typeof projectResponse>;
export type InitResponse = z.output<typeof initResponse>;
export type MigrateResponse = z.output<typeof migrateResponse>;
export type AgentsResponse = z.output<typeof agentsResponse>;
