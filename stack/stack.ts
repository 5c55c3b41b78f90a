// Brings the service up in one process: Temporal (embedded unless TEMPORAL_ADDRESS is set), the
// read model (migrated), a worker and the API, and takes it down again in the reverse order.
import type { SandboxSettings } from '../platform/sandbox-settings.ts';
import { describeForgeIdentity } from '../core/forge-identity.ts';
import { GitHubForge } from '../activities/forge/github-forge.ts';
import { startApi, type RunningApi } from '../api/server.ts';
import { TemporalGateway } from '../api/services/temporal-gateway.ts';
import { dialectOf, initORM, migrate, type ReadModel } from '../db/orm.ts';
import type { RunningWorker } from '../worker/worker.ts';
import { dataPaths, isLoopbackHost, type SvcConfig } from '../platform/config.ts';
import { sealDataDir } from './data-dir.ts';
import { claimDataDir } from './instance-lock.ts';
import { preflight } from './preflight.ts';
import { loadOperatorToken, type OperatorToken } from './operator-token.ts';
import { registerSearchAttributes } from './search-attributes-registration.ts';
import { startTemporalDev, type RunningTemporal } from './temporal-dev.ts';
import { setNamespaceRetention } from './namespace-retention.ts';
import { SVC_VERSION } from '../platform/version.ts';
import { configureLogging } from '../platform/logger.ts';
import { registerSecret, registerUrlSecret } from '../platform/secrets.ts';
import { SetupCodes } from '../api/services/setup-codes.ts';
import { OneTimeSecretsRepository } from '../db/repositories/one-time-secrets.repository.ts';
import { ForgeCredentials } from '../platform/forge-credentials.ts';
import { openProjectSecrets } from './project-secrets.ts';

export { SVC_VERSION };

/** The model credentials runtimes read from svc's environment (activities/runtimes/). */
const MODEL_KEYS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CODEX_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'];

/** How the worker's start-up line names the agents' isolation. */
const ISOLATION_WORDS = {
  bubblewrap: 'sandboxed by bubblewrap',
  container: 'in containers',
  kubernetes: 'in Kubernetes pods',
  process: 'UNSANDBOXED',
} as const;

/**
 * GET /instance's `runtime`: where agents run (a container engine or the worker's own host are both `local`'s peers).
 */
function runtimeName(mode: SandboxSettings['mode']): string {
  return mode === 'kubernetes' || mode === 'container' ? mode : 'local';
}

export interface StackOptions {
  config: SvcConfig;
  api: boolean;
  worker: boolean;
  noAuth: boolean;
  log?: (line: string) => void;
}

export interface RunningStack {
  config: SvcConfig;
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  embeddedTemporal: RunningTemporal | undefined;
  readModel: ReadModel;
  token: OperatorToken;
  api: RunningApi | undefined;
  worker: RunningWorker | undefined;
  /**
   * Arms a one-time dashboard sign-in code (10 minutes; it replaces the instance's earlier one) and
   * answers its link; undefined without an API.
   */
  setupLink(): Promise<string | undefined>;
  stop(): Promise<void>;
}

/**
 * Starts what `options` ask for. A configuration mistake throws a ConfigurationError and a data
 * directory another `svc serve` holds a DataDirInUseError, both before anything has started.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const { config } = options;
  const checked = preflight(config);
  const log = options.log ?? ((line: string) => console.log(line));
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error) => console.error(`svc: shutdown step failed: ${String(error)}`));
    stops.length = 0;
  };
  // An API is the instance of its data directory: one at a time (stack/instance-lock.ts), unless
  // its Temporal and database are elsewhere: then it is one of any number of replicas.
  const replica = Boolean(config.temporalAddress) && dialectOf(config.databaseUrl) === 'postgresql';
  const claim = options.api ? await claimDataDir(config.dataDir, replica ? 'shared' : 'exclusive') : undefined;
  if (claim) stops.push(() => claim.release());
  try {
    sealDataDir(config.dataDir);
    configureLogging({ level: config.logLevel });
    for (const secret of [config.apiToken, config.githubToken, config.judge.exportToken]) registerSecret(secret);
    registerUrlSecret(config.databaseUrl);
    // The model keys a runtime hands its agent: the agent may read them, nobody else is shown them.
    for (const name of MODEL_KEYS) registerSecret(process.env[name]);
    let embeddedTemporal: RunningTemporal | undefined;
    let temporalAddress: string;
    if (checked.embeddedTemporal || !config.temporalAddress) {
      embeddedTemporal = await startTemporalDev(
        config.dataDir,
        checked.embeddedTemporal?.settings,
        checked.embeddedTemporal?.cli,
      );
      stops.push(() => embeddedTemporal!.stop());
      temporalAddress = embeddedTemporal.address;
      await setNamespaceRetention(temporalAddress, embeddedTemporal.namespace, config.retention.temporalMs);
      const { cli } = embeddedTemporal;
      log(
        `temporal: embedded dev server at ${temporalAddress} ` +
          `(CLI from ${cli.source}${cli.path ? `: ${cli.path}` : ''})`,
      );
    } else {
      temporalAddress = config.temporalAddress;
      await registerSearchAttributes(temporalAddress, config.temporalNamespace);
      log(`temporal: external cluster at ${temporalAddress}`);
    }
    claim?.announce({ temporalAddress });

    const readModel = await initORM({ databaseUrl: config.databaseUrl });
    stops.push(() => readModel.close());
    const applied = await migrate(readModel);
    const where = readModel.dialect === 'sqlite' ? ` at ${config.databaseUrl}` : '';
    log(`read model: ${readModel.dialect}${where}${applied.length ? ` (applied ${applied.join(', ')})` : ''}`);

    const token = loadOperatorToken(config.apiToken, dataPaths.operatorToken(config.dataDir));
    registerSecret(token.token);
    const secretsKeys = await openProjectSecrets(config, readModel, log);
    // Which GitHub identity svc acts with: an App swapped in unnoticed would be the operator's first question.
    const forgeCredentials = ForgeCredentials.fromConfig(config);
    log(`github: acting as ${describeForgeIdentity(forgeCredentials.identity())}`);

    const { agents } = checked;
    const setupCodes = new SetupCodes(new OneTimeSecretsRepository(readModel));
    // The API starts first, so the worker can tell agents where it listens.
    let api: RunningApi | undefined;
    if (options.api) {
      const temporal = await TemporalGateway.connect({
        address: temporalAddress,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
      });
      stops.push(() => temporal.close());
      api = await startApi({
        host: config.host,
        port: config.port,
        version: SVC_VERSION,
        dataDir: config.dataDir,
        projectsRoot: config.projectsRoot,
        forge: new GitHubForge({ apiUrl: config.githubApiUrl, token: config.githubToken }),
        runBranchPrefix: config.runBranchPrefix,
        maxConcurrentRuns: config.maxConcurrentRuns,
        diskFloor: config.diskFloor,
        runTiming: config.runTiming,
        planTiming: config.planTiming,
        temporalUi: { url: embeddedTemporal?.uiUrl ?? config.temporalUiUrl, namespace: config.temporalNamespace },
        judge: config.judge,
        lifecycle: config.lifecycleStreams,
        auth: { operatorToken: token.token, noAuth: options.noAuth, publicMode: config.auth.mode === 'public' },
        publicAllowlist: config.auth.publicAllowlist,
        spectatorLimits: config.auth.spectatorLimits,
        readModel,
        secretsKeys,
        temporal,
        agents,
        instance: { name: config.instanceName, publicUrl: config.publicUrl, runtime: runtimeName(config.sandbox.mode) },
        kubernetes: config.sandbox.mode === 'kubernetes' ? config.sandbox.kubernetes : null,
        // Only a container or a pod runs a project's `agentImage`.
        agentImages:
          config.sandbox.mode === 'container' || config.sandbox.mode === 'kubernetes' ? config.sandbox.container : null,
        setupCodes,
        forgeCredentials,
        githubApp: config.githubApp,
        preview: config.preview,
        webhookPrivateTargets: config.webhooks.privateTargets,
        allowedHosts: config.allowedHosts,
        // The in-process worker's Temporal SDK metrics, on the API's one /metrics.
        extraMetrics:
          options.worker && config.temporalMetricsAddress
            ? () => fetchText(`http://${config.temporalMetricsAddress}/metrics`)
            : undefined,
      });
      stops.push(() => api!.close());
      claim?.announce({ url: api.url });
    }

    let worker: RunningWorker | undefined;
    if (options.worker) {
      // Loaded only here: an API apart from its workers never holds the worker's code (the SDK's
      // native core, the bundler, the activities), ~20 MiB of its memory (docs/decisions/0037-process-costs.md).
      const { startWorker } = await import('../worker/worker.ts');
      const { startWorkerMetricsServer } = await import('../worker/metrics-server.ts');
      const { chooseIsolation, containerBackendReady, kubernetesBackendReady, UNSANDBOXED_WARNING } =
        await import('../sandbox/index.ts');
      // A worker that cannot sandbox its agents refuses to start rather than run them bare.
      const isolation = chooseIsolation(config.sandbox);
      if (isolation === 'process') log(`WARNING: ${UNSANDBOXED_WARNING}`);
      if (isolation === 'container') log(await containerBackendReady(config.sandbox.container));
      if (isolation === 'kubernetes') log(await kubernetesBackendReady(config.sandbox.kubernetes));
      // Each preview is reached where its worker says it is: a worker apart from the API must say an address.
      if (!options.api && isolation !== 'kubernetes' && isLoopbackHost(config.preview.workerHost))
        log(
          `worker: previews are reached at ${config.preview.workerHost}, which an API on another host cannot ` +
            'reach: set SVC_PREVIEW_BIND and SVC_PREVIEW_WORKER_HOST to an address it can (docs/previews.md)',
        );
      const baseUrl = config.apiUrl ?? api?.url;
      worker = await startWorker({
        config,
        temporalAddress,
        readModel,
        secretsKeys,
        agents,
        agentApi: baseUrl ? { baseUrl, operatorToken: token.token } : undefined,
        operatorToken: token.token,
      });
      stops.push(() => worker!.shutdown());
      if (!options.api && config.workerMetricsAddress) {
        const metrics = await startWorkerMetricsServer({
          address: config.workerMetricsAddress,
          operatorToken: token.token,
          temporalMetrics: config.temporalMetricsAddress
            ? () => fetchText(`http://${config.temporalMetricsAddress}/metrics`)
            : undefined,
        });
        stops.push(() => metrics.close());
        log(`worker metrics: ${metrics.url} (operator token)`);
      }
      log(`worker: polling task queue "${config.taskQueue}" (agents ${ISOLATION_WORDS[isolation]})`);
    }

    return {
      config,
      temporalAddress,
      temporalUiUrl: embeddedTemporal?.uiUrl,
      embeddedTemporal,
      readModel,
      token,
      api,
      worker,
      setupLink: async () =>
        api ? `${config.publicUrl ?? api.url}/setup?code=${(await setupCodes.arm()).code}` : undefined,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function fetchText(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return response.ok ? response.text() : '';
}
