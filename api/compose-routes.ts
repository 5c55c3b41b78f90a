// The API's routes, composed: every service built from the server's dependencies and handed to
// its router. startApi serves them; `npm run openapi` documents them (documentedRoutes).
import { Admission } from './services/admission.ts';
import { pendingPodsOnAWorker } from './services/pending-pods.ts';
import { ProjectsRepository } from '../db/repositories/projects.repository.ts';
import { AnalyticsRepository } from '../db/repositories/analytics.repository.ts';
import { OpsRepository } from '../db/repositories/ops.repository.ts';
import { analyticsRoutes } from './routes/analytics.router.ts';
import { AnalyticsService } from './services/analytics.service.ts';
import { RunsRepository } from '../db/repositories/runs.repository.ts';
import { PlanRunsRepository } from '../db/repositories/plan-runs.repository.ts';
import { InboxRepository } from '../db/repositories/inbox.repository.ts';
import { HealthRepository } from '../db/repositories/health.repository.ts';
import { opsRoutes } from './routes/ops.router.ts';
import { alertsRoutes } from './routes/alerts.router.ts';
import { HealerService } from './services/healer.service.ts';
import { OpsService } from './services/ops.service.ts';
import { SetupCodes } from './services/setup-codes.ts';
import { githubAppRoutes } from './routes/github-app.router.ts';
import { GitHubAppService } from './services/github-app.service.ts';
import { GitHubAppRegistrationWindow } from './services/github-app-registration.ts';
import { ForgeCredentials } from '../platform/forge-credentials.ts';
import { metaRoutes, openApiRoute, type ReadinessCheck } from './routes/meta.router.ts';
import type { RouteSpec } from './route.ts';
import { runsRoutes } from './routes/runs.router.ts';
import { runLogRoutes } from './routes/run-log.router.ts';
import { SandboxCallbacksService } from './services/sandbox-callbacks.service.ts';
import { projectsRoutes } from './routes/projects.router.ts';
import { catalogRoutes } from './routes/catalog.router.ts';
import { planRunsRoutes } from './routes/plan-runs.router.ts';
import { extensionsRoutes } from './routes/extensions.router.ts';
import { eventsRoutes } from './routes/events.router.ts';
import { type LifecycleHub } from './services/lifecycle-hub.ts';
import { JudgeProxy } from './services/judge-proxy.ts';
import { Spectators } from './presenters/spectator.ts';
import { runLinks } from './presenters/links.ts';
import { PlanRunWorkflows } from './services/plan-run-workflows.ts';
import { PlanRunsService } from './services/plan-runs.service.ts';
import { ProjectsService } from './services/projects.service.ts';
import { type RunEventsService } from './services/run-events.service.ts';
import { RunsService } from './services/runs.service.ts';
import { RunDiffs } from './services/run-diffs.ts';
import { PreviewService } from './services/preview.service.ts';
import { previewRoutes } from './routes/preview.router.ts';
import { PreviewCookies } from './preview/preview-cookie.ts';
import { parsePreviewSettings } from '../platform/preview-settings.ts';
import { webhooksRoutes } from './routes/webhooks.router.ts';
import { WebhooksService } from './services/webhooks.service.ts';
import { WebhooksRepository } from '../db/repositories/webhooks.repository.ts';
import { OneTimeSecretsRepository } from '../db/repositories/one-time-secrets.repository.ts';
import { ProjectSecretsRepository } from '../db/repositories/project-secrets.repository.ts';
import { projectSecretsRoutes } from './routes/project-secrets.router.ts';
import { ProjectSecretsService } from './services/project-secrets.service.ts';
import type { ApiServerDeps } from './server-deps.ts';

export function allRoutes(
  deps: Omit<ApiServerDeps, 'host' | 'port'>,
  events: RunEventsService,
  lifecycle: LifecycleHub,
  secrets: string[] = [],
  previewProxyPort: () => number = () => 0,
  /** Where this API listens, once it does: the dashboard's links without SVC_PUBLIC_URL. */
  ownUrl: () => string = () => '',
) {
  const runRows = new RunsRepository(deps.readModel);
  const planRunRows = new PlanRunsRepository(deps.readModel);
  const projectRows = new ProjectsRepository(deps.readModel);
  const projects = new ProjectsService({
    projectRows,
    runRows,
    planRunRows,
    temporal: deps.temporal,
    agents: deps.agents,
    projectsRoot: deps.projectsRoot,
  });
  const admission = new Admission({
    runRows,
    kubernetes: deps.kubernetes ?? null,
    agentImages: deps.agentImages ?? null,
    maxConcurrentRuns: deps.maxConcurrentRuns ?? null,
    pendingPods: pendingPodsOnAWorker(deps.temporal),
    disk: deps.diskFloor ? { dataDir: deps.dataDir, floor: deps.diskFloor } : null,
  });
  const runs = new RunsService({
    admission,
    projectRows,
    runRows,
    temporal: deps.temporal,
    agents: deps.agents,
    projects,
    dataDir: deps.dataDir,
    runBranchPrefix: deps.runBranchPrefix,
    maxConcurrentRuns: deps.maxConcurrentRuns ?? null,
    runTiming: deps.runTiming,
  });
  // Without svc's own (documentation, a caller that gives none): anonymous.
  const forgeCredentials =
    deps.forgeCredentials ??
    new ForgeCredentials({ apiUrl: 'https://api.github.com', pat: undefined, app: undefined, dataDir: deps.dataDir });
  const callbacks = new SandboxCallbacksService({
    inboxRows: new InboxRepository(deps.readModel),
    temporal: deps.temporal,
    dataDir: deps.dataDir,
    runs,
    projectRows,
    forgeCredentials,
  });
  const links = runLinks({
    temporalUi: deps.temporalUi,
    dashboardBase: () => deps.instance?.publicUrl ?? ownUrl(),
  });
  const spectators = new Spectators({
    allowlist: deps.publicAllowlist ?? [],
    secrets,
    hiddenPaths: [deps.dataDir, deps.projectsRoot],
    showsPrompts: (projectId) => projects.showsPromptsToSpectators(projectId),
    projects: () => projectRows.gitUrls(),
  });
  const planRuns = new PlanRunsService({
    planRunRows,
    runRows,
    workflows: new PlanRunWorkflows(deps.temporal),
    projects,
    agents: deps.agents,
    planTiming: deps.planTiming,
    runTiming: deps.runTiming,
  });
  const ops = new OpsService({
    instance: {
      version: deps.version,
      name: deps.instance?.name ?? 'svc',
      publicUrl: deps.instance?.publicUrl ?? null,
      runtime: deps.instance?.runtime ?? 'local',
      authMode: deps.auth?.publicMode ? 'public' : 'token',
      dbBackend: deps.readModel?.dialect ?? 'sqlite',
      startedAt: Date.now(),
      admission: admission.limits,
    },
    ops: new OpsRepository(deps.readModel),
    readiness: () => readinessChecks(deps),
    liveStreams: () => ({ lifecycle: lifecycle.size, runEvents: events.streams.size }),
    extraMetrics: deps.extraMetrics,
  });
  const oneTimeSecrets = new OneTimeSecretsRepository(deps.readModel);
  const setup = {
    codes: deps.setupCodes ?? new SetupCodes(oneTimeSecrets),
    token: deps.auth?.operatorToken ?? '',
    publicUrl: deps.instance?.publicUrl ?? null,
  };
  const routes: RouteSpec<any, any, any>[] = [
    ...metaRoutes({ version: deps.version, readinessChecks: () => readinessChecks(deps) }),
    ...runsRoutes(runs, callbacks, events, links, spectators, new RunDiffs(deps.temporal)),
    ...runLogRoutes(runs, events, spectators),
    ...planRunsRoutes(planRuns, events, links, spectators),
    ...projectsRoutes(projects, runs, links, spectators),
    ...projectSecretsRoutes(
      new ProjectSecretsService(new ProjectSecretsRepository(deps.readModel, deps.secretsKeys), projects),
    ),
    ...catalogRoutes(deps.agents, deps.forge),
    ...eventsRoutes(lifecycle),
    ...previewRoutes(
      new PreviewService({
        settings: deps.preview ?? parsePreviewSettings({}, 0),
        cookies: new PreviewCookies(deps.auth?.operatorToken ?? ''),
        runs,
        temporal: deps.temporal,
        proxyPort: previewProxyPort,
      }),
    ),
    ...opsRoutes(ops, spectators, setup),
    ...githubAppRoutes(
      new GitHubAppService({
        settings: deps.githubApp ?? { registration: 'off', credentialStore: 'page', app: undefined },
        credentials: forgeCredentials,
        dataDir: deps.dataDir,
        publicUrl: deps.instance?.publicUrl ?? null,
        publicMode: Boolean(deps.auth?.publicMode),
        window: new GitHubAppRegistrationWindow(oneTimeSecrets),
      }),
    ),
    ...alertsRoutes(new HealerService({ projectRows, runRows, temporal: deps.temporal, agents: deps.agents, runs })),
    ...webhooksRoutes(
      new WebhooksService({
        rows: new WebhooksRepository(deps.readModel),
        temporal: deps.temporal,
        operatorToken: deps.auth?.operatorToken ?? '',
        privateTargets: deps.webhookPrivateTargets ?? [],
      }),
    ),
    ...analyticsRoutes(new AnalyticsService(new AnalyticsRepository(deps.readModel)), spectators),
    ...extensionsRoutes(new JudgeProxy(deps.judge ?? { baseUrl: undefined, exportToken: undefined })),
  ];
  routes.push(openApiRoute(() => routes, deps.version));
  return routes;
}

/** The routes as documentation sees them: built without live dependencies (no handler runs). */
export function documentedRoutes(version: string): RouteSpec<any, any, any>[] {
  const inert = { version, temporal: { client: undefined, taskQueue: '' } } as unknown as Omit<
    ApiServerDeps,
    'host' | 'port'
  >;
  return allRoutes(inert, undefined as unknown as RunEventsService, undefined as unknown as LifecycleHub);
}

/** A database that does not answer in this long is not ready (Temporal's calls have their own deadline). */
const DB_PING_DEADLINE_MS = 5000;

async function readinessChecks(deps: Pick<ApiServerDeps, 'readModel' | 'temporal'>): Promise<ReadinessCheck[]> {
  const ping = new HealthRepository(deps.readModel).ping();
  const deadline = new Promise<never>((_resolve, reject) => {
    setTimeout(() => reject(new Error(`no answer in ${DB_PING_DEADLINE_MS} ms`)), DB_PING_DEADLINE_MS).unref();
  });
  const [db, temporal] = await Promise.all([
    Promise.race([ping, deadline])
      .then((): ReadinessCheck => ({ name: 'db_reachable', ok: true }))
      .catch((error: Error): ReadinessCheck => {
        void ping.catch(() => undefined);
        return { name: 'db_reachable', ok: false, message: error.message, hint: 'check DATABASE_URL' };
      }),
    deps.temporal.isReachable().then((reachable): ReadinessCheck =>
      reachable
        ? { name: 'temporal_reachable', ok: true }
        : {
            name: 'temporal_reachable',
            ok: false,
            message: 'Temporal did not answer',
            hint: 'check TEMPORAL_ADDRESS or the embedded server log',
          },
    ),
  ]);
  return [db, temporal];
}
