// The API's JSON, typed from the server's own zod schemas (type-only imports: nothing of the server
// reaches the bundle). A schema change that breaks the dashboard fails its type-check.
import type { z } from 'zod';
import type { githubAppRegistrationResponse, githubIdentityResponse } from '../../../api/routes/github-app.schema.ts';
import type { RunJson } from '../../../core/run-schema.ts';
import type { DiffFile, RunDiff as RunDiffJson } from '../../../core/run-diff.ts';
import type {
  cancelRunResponse,
  dispatchRunBody,
  dispatchRunResponse,
  eventLineSchema,
  getRunResponse,
  listRunsResponse,
  steerResponse,
} from '../../../api/routes/runs.schema.ts';
import type {
  cancelPlanRunResponse,
  createPlanRunBody,
  createPlanRunResponse,
  getPlanRunResponse,
  listPlanRunsResponse,
  planRunChildSchema,
  resumePlanRunResponse,
} from '../../../api/routes/plan-runs.schema.ts';
import type {
  plansResponse,
  projectResponse,
  projectsResponse,
  projectViewResponse,
  readyPlansResponse,
  refreshProjectBody,
  refreshResponse,
  registerProjectBody,
  svcConfigResponse,
  triggersResponse,
} from '../../../api/routes/projects.schema.ts';
import type {
  projectSecretResponse,
  projectSecretsResponse,
  putSecretBody,
} from '../../../api/routes/project-secrets.schema.ts';
import type { agentsResponse } from '../../../api/routes/catalog.schema.ts';
import type { previewLoginResponse } from '../../../api/routes/preview.schema.ts';
import type { lifecycleLine } from '../../../api/routes/events.schema.ts';
import type { whoamiResponse } from '../../../api/routes/meta.schema.ts';
import type { instanceResponse, overviewResponse } from '../../../api/routes/ops.schema.ts';
import type { listWebhooksResponse } from '../../../api/routes/webhooks.schema.ts';
import type {
  costAnalyticsResponse,
  runAnalyticsResponse,
  runAnalyticsSchema,
} from '../../../api/routes/analytics.schema.ts';
import type { dispatchAnalyticsResponse } from '../../../api/routes/analytics-dispatch.schema.ts';

export type { RunState, PlanRunState, PlanRunChildState, PlanRunSource } from '../../../core/run-states.ts';
export type Run = RunJson;
export type RunList = z.output<typeof listRunsResponse>;
export type RunDetail = z.output<typeof getRunResponse>;
export type DispatchRunBody = z.input<typeof dispatchRunBody>;
export type DispatchRunResult = z.output<typeof dispatchRunResponse>;
export type CancelRunResult = z.output<typeof cancelRunResponse>;
export type RunEvent = z.output<typeof eventLineSchema>;
export type SteerResult = z.output<typeof steerResponse>;
export type PreviewLogin = z.output<typeof previewLoginResponse>;
export type InboxMessage = SteerResult['message'];

export type PlanRunList = z.output<typeof listPlanRunsResponse>;
export type PlanRunDetail = z.output<typeof getPlanRunResponse>;
export type PlanRunChild = z.output<typeof planRunChildSchema>;
export type CreatePlanRunBody = z.input<typeof createPlanRunBody>;
export type CreatePlanRunResult = z.output<typeof createPlanRunResponse>;
/** A plan-run as a reader sees it (a spectator's lacks the template, overrides, cap and reason). */
export type PlanRunView = PlanRunDetail['planRun'];
export type PlanRunChildView = PlanRunDetail['children'][number];
export type PlanRunRun = PlanRunDetail['runs'][number];
export type CancelPlanRunResult = z.output<typeof cancelPlanRunResponse>;
export type ResumePlanRunResult = z.output<typeof resumePlanRunResponse>;

export type ProjectList = z.output<typeof projectsResponse>;
export type Project = ProjectList['projects'][number];
export type ProjectDetail = z.output<typeof projectViewResponse>;
export type RefreshResult = z.output<typeof refreshResponse>;
export type RegisterProjectBody = z.input<typeof registerProjectBody>;
export type RefreshProjectBody = z.input<typeof refreshProjectBody>;
/** POST /projects and DELETE /projects/{id} answer the operator's view of the project. */
export type ProjectResult = z.output<typeof projectResponse>;
export type PlanList = z.output<typeof plansResponse>;
export type ReadyPlans = z.output<typeof readyPlansResponse>;
export type ReadyPlan = ReadyPlans['plans'][number];
export type SvcConfig = z.output<typeof svcConfigResponse>;
export type Triggers = z.output<typeof triggersResponse>;
export type ConfigProblem = SvcConfig['errors'][number];
/** A project's secrets: names, scopes and times; the API never answers a value. */
export type ProjectSecretList = z.output<typeof projectSecretsResponse>;
export type ProjectSecret = ProjectSecretList['secrets'][number];
export type PutSecretBody = z.input<typeof putSecretBody>;
export type ProjectSecretResult = z.output<typeof projectSecretResponse>;

export type AgentList = z.output<typeof agentsResponse>;
export type Agent = AgentList['agents'][number];
export type LifecycleLine = z.output<typeof lifecycleLine>;
export type Whoami = z.output<typeof whoamiResponse>;
export type Instance = z.output<typeof instanceResponse>;
export type OpsOverview = z.output<typeof overviewResponse>;
export type WebhookList = z.output<typeof listWebhooksResponse>;
export type RunAnalytics = z.output<typeof runAnalyticsResponse>;
/** The operator's run analytics (with USD); spectators get the same without those fields. */
export type OperatorRunAnalytics = z.output<typeof runAnalyticsSchema>;
export type CostAnalytics = z.output<typeof costAnalyticsResponse>;
export type DispatchAnalytics = z.output<typeof dispatchAnalyticsResponse>;

/** The error envelope every failing route answers with. */
export interface ErrorEnvelope {
  error: { code: string; message: string; hint?: string };
}

export type RunDiff = RunDiffJson;
export type RunDiffFile = DiffFile;
export type GitHubIdentity = z.output<typeof githubIdentityResponse>;
export type GitHubAppRegistration = z.output<typeof githubAppRegistrationResponse>;
