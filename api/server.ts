// The API process: wires services into routes and serves them over HTTP, with a clean shutdown.
import { Admission } from './services/admission.ts';
import type { KubernetesSettings } from '../platform/sandbox-settings.ts';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ReadModel } from '../db/orm.ts';
import type { RunTiming } from '../core/run-model.ts';
import type { PlanTiming } from '../core/plan-model.ts';
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
import { ForgeCredentials } from '../platform/forge-credentials.ts';
import type { GitHubAppSettings } from '../platform/config.ts';
import { isTerminalRunState } from '../core/run-states.ts';
import { createApiApp } from './app.ts';
import { loadDashboard } from './middleware/dashboard.ts';
import { fileURLToPath } from 'node:url';
import { logger } from '../platform/logger.ts';
import type { AuthSettings } from './auth.ts';
import { metaRoutes, openApiRoute, type ReadinessCheck } from './routes/meta.router.ts';
import type { RouteSpec } from './route.ts';
import { runsRoutes } from './routes/runs.router.ts';
import { SandboxCallbacksService } from './services/sandbox-callbacks.service.ts';
import { projectsRoutes } from './routes/projects.router.ts';
import { catalogRoutes } from './routes/catalog.router.ts';
import { planRunsRoutes } from './routes/plan-runs.router.ts';
import { extensionsRoutes } from './routes/extensions.router.ts';
import { eventsRoutes } from './routes/events.router.ts';
import { DEFAULT_LIFECYCLE_SETTINGS, LifecycleHub } from './services/lifecycle-hub.ts';
import { JudgeProxy, type JudgeSettings } from './services/judge-proxy.ts';
import { Spectators } from './presenters/spectator.ts';
import { PlanRunWorkflows } from './services/plan-run-workflows.ts';
import { PlanRunsService } from './services/plan-runs.service.ts';
import { ProjectsService } from './services/projects.service.ts';
import { RunEventsService } from './services/run-events.service.ts';
import type { GitHubForge } from '../activities/forge/github-forge.ts';
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import { RunsService } from './services/runs.service.ts';
import { PreviewService } from './services/preview.service.ts';
import { previewRoutes } from './routes/preview.router.ts';
import { PreviewCookies } from './preview/preview-cookie.ts';
import { startPreviewProxy } from './preview/preview-proxy.ts';
import { parsePreviewSettings, type PreviewSettings } from '../platform/preview-settings.ts';
import type { TemporalGateway } from './services/temporal-gateway.ts';

export interface ApiServerDeps {
  host: string;
  port: number;
  version: string;
  dataDir: string;
  projectsRoot: string;
  forge: GitHubForge;
  runBranchPrefix: string;
  runTiming: RunTiming;
  planTiming: PlanTiming;
  /** Where operators debug workflows: responses about a run or a plan-run link to its page there. */
  temporalUi?: { url: string | undefined; namespace: string };
  judge?: JudgeSettings;
  /** Lifecycle stream limits (SVC_EVENT_STREAM_MAX, _KEEPALIVE_MS, _POLL_MS). */
  lifecycle?: { maxStreams?: number; keepAliveMs?: number; pollMs?: number };
  auth: Pick<AuthSettings, 'operatorToken' | 'noAuth' | 'publicMode'>;
  /** Public mode: the owners or owner/repo whose projects spectators may see. */
  publicAllowlist?: string[];
  readModel: ReadModel;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  /** GET /instance: what this instance calls itself, where it is reached, the sandbox backend. */
  instance?: { name: string; publicUrl: string | null; runtime: string };
  /** The Kubernetes backend's settings when agents run as pods: admission counts the cluster's pods. */
  kubernetes?: KubernetesSettings | null;
  /** The dashboard's one-time sign-in codes (`svc serve` arms one and prints its link). */
  setupCodes?: SetupCodes;
  /** Prometheus text appended to GET /metrics: the in-process worker's Temporal SDK metrics. */
  extraMetrics?: () => Promise<string>;
  /** svc's forge tokens per repository (the git-credential route mints a sandbox's from them). */
  forgeCredentials?: ForgeCredentials;
  /** The /github-app/* registration routes' settings (absent: off). */
  githubApp?: GitHubAppSettings;
  /** The built web dashboard (default: web/dist of this checkout). */
  webDir?: string;
  /** Where previews are served (SVC_PREVIEW_*); the proxy listens on the API's host. */
  preview?: PreviewSettings;
}

/** Where `npm run build:web` (run by the install step) puts the dashboard. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../web/dist', import.meta.url));

export interface RunningApi {
  url: string;
  /** The preview proxy's origin (path mode: previews at /p/<runId>/ there). */
  previewUrl: string;
  server: Server;
  close(): Promise<void>;
}

export function allRoutes(
  deps: Omit<ApiServerDeps, 'host' | 'port'>,
  events: RunEventsService,
  lifecycle: LifecycleHub,
  secrets: string[] = [],
  previewProxyPort: () => number = () => 0,
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
  const admission = new Admission({ runRows, kubernetes: deps.kubernetes ?? null });
  const runs = new RunsService({
    admission,
    projectRows,
    runRows,
    temporal: deps.temporal,
    agents: deps.agents,
    projects,
    dataDir: deps.dataDir,
    runBranchPrefix: deps.runBranchPrefix,
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
  const links = temporalLinks(deps.temporalUi);
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
  const setup = { codes: deps.setupCodes ?? new SetupCodes(), token: deps.auth?.operatorToken ?? '' };
  const routes: RouteSpec<any, any, any>[] = [
    ...metaRoutes({ version: deps.version, readinessChecks: () => readinessChecks(deps) }),
    ...runsRoutes(runs, callbacks, events, links, spectators),
    ...planRunsRoutes(planRuns, events, links, spectators),
    ...projectsRoutes(projects, runs, links, spectators),
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
      }),
    ),
    ...alertsRoutes(new HealerService({ projectRows, temporal: deps.temporal, agents: deps.agents, runs })),
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

export type TemporalLinks = (workflowId: string) => { temporalUi: string | null };

function temporalLinks(ui: ApiServerDeps['temporalUi']): TemporalLinks {
  return (workflowId) => ({
    temporalUi: ui?.url
      ? `${ui.url}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(workflowId)}`
      : null,
  });
}

async function readinessChecks(deps: Pick<ApiServerDeps, 'readModel' | 'temporal'>): Promise<ReadinessCheck[]> {
  const db: ReadinessCheck = await new HealthRepository(deps.readModel)
    .ping()
    .then(() => ({ name: 'db_reachable', ok: true }))
    .catch((error: Error) => ({ name: 'db_reachable', ok: false, message: error.message, hint: 'check DATABASE_URL' }));
  const temporal: ReadinessCheck = (await deps.temporal.isReachable())
    ? { name: 'temporal_reachable', ok: true }
    : {
        name: 'temporal_reachable',
        ok: false,
        message: 'Temporal did not answer',
        hint: 'check TEMPORAL_ADDRESS or the embedded server log',
      };
  return [db, temporal];
}

export async function startApi(deps: ApiServerDeps): Promise<RunningApi> {
  const events = new RunEventsService(deps.readModel, { maxFollowing: deps.lifecycle?.maxStreams });
  const lifecycle = new LifecycleHub(deps.readModel, {
    ...DEFAULT_LIFECYCLE_SETTINGS,
    pollMs: 1000,
    ...deps.lifecycle,
  });
  await lifecycle.start();
  const isRunActive = async (runId: string) => {
    const state = await new RunsRepository(deps.readModel).stateOf(runId);
    return state !== null && !isTerminalRunState(state);
  };
  const dashboard = await loadDashboard(deps.webDir ?? DEFAULT_WEB_DIR);
  if (!dashboard)
    logger({ component: 'api' }).warn('the web dashboard is not built (npm run build:web): the API serves no pages');
  const preview = await startPreviewProxy({
    settings: deps.preview ?? parsePreviewSettings({}, 0),
    cookies: new PreviewCookies(deps.auth.operatorToken),
    host: deps.host,
    runs: new RunsRepository(deps.readModel),
    hit: (runId, at) => void deps.temporal.previewHit(runId, at),
  });
  const app = createApiApp({
    dashboard,
    auth: { ...deps.auth, isRunActive },
    routes: allRoutes(deps, events, lifecycle, [deps.auth.operatorToken], () => preview.port),
    logger: { error: (message, meta) => logger({ component: 'api' }).error(meta, message) },
  });
  const server = createServer(app.callback());
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.port;
  const host = deps.host.includes(':') ? `[${deps.host}]` : deps.host;
  return {
    url: `http://${host}:${port}`,
    previewUrl: `http://${host}:${preview.port}`,
    server,
    async close() {
      await preview.close();
      // Held-open event streams end first, so their clients see a clean end of stream.
      events.streams.closeAll();
      await lifecycle.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Held-open streams end here; a client mid-request gets its answer first.
      setTimeout(() => sockets.forEach((socket) => socket.destroy()), 2000).unref();
      await closed;
    },
  };
}
