// Everything the service reads from its environment, in one typed object. Documented in the
// README (Configuration); nothing else reads process.env for service settings.
import { parseRetentionSettings, type RetentionSettings } from './retention-settings.ts';
import { parseConfiguredWebhooks, type Webhook, type WebhookSettings } from '../core/webhooks.ts';
import { describeEgressRule, isExactRule, parseEgressList, type EgressRule } from '../core/egress-rules.ts';
import { resolve, join } from 'node:path';
import { isIP } from 'node:net';
import { DEFAULT_MAX_RUN_MS, DEFAULT_RUN_TIMING, type RunTiming } from '../core/run-model.ts';
import { DEFAULT_PLAN_TIMING, type PlanTiming } from '../core/plan-model.ts';
import { parsePreviewSettings, type PreviewSettings } from './preview-settings.ts';
import { parseSandboxSettings, type SandboxSettings } from './sandbox-settings.ts';
import { DEFAULT_DISK_FLOOR, type DiskFloor } from './disk-space.ts';
import { parseLogLevel, type LogLevelName } from './logger.ts';
import { asConfigurationError } from './config-error.ts';
import { GITHUB_GIT_URL } from '../core/git-url.ts';
import { checkSecretsKeySettings, type SecretsKeySettings } from './secrets-key.ts';

export interface SvcConfig {
  /** What this instance calls itself (GET /instance, the dashboard's title): SVC_INSTANCE_NAME. */
  instanceName: string;
  /** Where users reach this instance from outside (SVC_PUBLIC_URL); null when only its bind address is known. */
  publicUrl: string | null;
  /**
   * The host names the API answers to besides loopback names and addresses (api/middleware/browser-guards.ts):
   * SVC_ALLOWED_HOSTS, the hosts of SVC_PUBLIC_URL, SVC_API_URL and SVC_HOST, and SVC_PREVIEW_HOST (the
   * dashboard that logs browsers in to subdomain previews is reached there).
   */
  allowedHosts: string[];
  /** One level for the whole process's structured log (SVC_LOG_LEVEL; default info). */
  logLevel: LogLevelName;
  dataDir: string;
  host: string;
  port: number;
  /** SQLite file path (embedded default) or a postgres:// URL. */
  databaseUrl: string;
  /** Set when an external Temporal is used; unset means `svc serve` starts the embedded one. */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  taskQueue: string;
  /** Operator token from the environment; otherwise a token file in the data directory. */
  apiToken: string | undefined;
  /** SVC_SECRETS_KEY (else a key file in the data directory) and SVC_SECRETS_KEY_PREVIOUS: project secrets' seal. */
  secretsKey: SecretsKeySettings;
  agentsFile: string | undefined;
  /** Where project clones live: <root>/<owner>/<name>. */
  projectsRoot: string;
  /** A GitHub token (PAT) for clones, pushes and the forge API; unset means anonymous. */
  githubToken: string | undefined;
  /** Where agents (and a standalone worker's agents) reach the API; default: the API this process serves. */
  apiUrl: string | undefined;
  /** GitHub's REST base URL (GitHub Enterprise, or a local stand-in in tests). */
  githubApiUrl: string;
  /** Where svc's own git reaches GitHub's repositories, ending in "/": https://github.com/, or a mirror's prefix. */
  githubGitUrl: string;
  /** The GitHub App svc acts as (installation tokens instead of the PAT), and its registration routes. */
  githubApp: GitHubAppSettings;
  /** The branch prefix of runs whose project does not set runBranchPrefix. */
  runBranchPrefix: string;
  runTiming: RunTiming;
  /** A run's output kept as events at most, in bytes (SVC_RUN_OUTPUT_MAX_MIB, default 64; 0: no cap). */
  runOutputMaxBytes: number | null;
  planTiming: PlanTiming;
  /** The Temporal Web UI of an external cluster (the embedded server's is known); links to workflows point there. */
  temporalUiUrl: string | undefined;
  /** The judge extension's export, proxied for operators (both or nothing). */
  judge: { baseUrl: string | undefined; exportToken: string | undefined };
  lifecycleStreams: { maxStreams: number; keepAliveMs: number; pollMs: number };
  /** SVC_AUTH: token (default) or public (credential-less spectators), with the projects they may see. */
  auth: { mode: 'token' | 'public'; publicAllowlist: string[]; spectatorLimits: SpectatorLimitSettings };
  sandbox: SandboxSettings;
  preview: PreviewSettings;
  /** How often the reconciler looks for rows whose workflow has closed (SVC_RECONCILE_INTERVAL_MS). */
  reconcileIntervalMs: number;
  /** How long runs' files, events and closed workflows are kept (SVC_RETENTION_*). */
  retention: RetentionSettings;
  /** SVC_MAX_CONCURRENT_RUNS: runs past it wait, queued, for a slot (null: no instance-wide limit). */
  maxConcurrentRuns: number | null;
  /** The free space under which the data directory's filesystem takes no new run (SVC_DISK_MIN_FREE_*). */
  diskFloor: DiskFloor;
  /** Outgoing webhooks: SVC_WEBHOOKS (null when unset: the API's registrations alone), and delivery settings. */
  webhooks: WebhookSettings & { configured: Webhook[] | null };
  /** Rows untouched for this long are the ones a scheduled pass checks (SVC_RECONCILE_STALE_AFTER_MS). */
  reconcileStaleAfterMs: number;
  /**
   * Where the worker's Temporal SDK serves its Prometheus metrics (SVC_TEMPORAL_METRICS_ADDRESS, host:port); unset:
   * off.
   */
  temporalMetricsAddress: string | undefined;
  /** Where a standalone worker serves its own /metrics (SVC_WORKER_METRICS_ADDRESS, host:port); unset: off. */
  workerMetricsAddress: string | undefined;
  /** Prebuilt workflow bundle (tests build it once); unset means bundle from source at start. */
  workflowBundlePath: string | undefined;
  /** How much of its machine one worker takes: Temporal's sticky workflow cache and task slots. */
  workerCapacity: WorkerCapacity;
}

/**
 * A worker's share of its machine. The sticky cache keeps recently run workflows in memory so
 * their next task needs no replay; beyond the bound the least recently used is evicted (a run
 * watching its PR for days then costs nothing until its next timer). Defaults suit a small box.
 */
export interface WorkerCapacity {
  /** SVC_WORKER_MAX_CACHED_WORKFLOWS (default 64: ~0.5–1.5 MiB of the workflow thread's heap each). */
  maxCachedWorkflows: number;
  /** SVC_WORKER_MAX_ACTIVITIES (default 200: supervising an agent is a cheap poll). */
  maxConcurrentActivities: number;
  /** SVC_WORKER_MAX_WORKFLOW_TASKS (default 40, the SDK's). */
  maxConcurrentWorkflowTasks: number;
}

/** Public mode's limits per spectator client, in each API process (api/spectator-limits.ts). */
export interface SpectatorLimitSettings {
  /** SVC_PUBLIC_RATE_PER_SECOND (default 10): requests a client's bucket refills per second. */
  ratePerSecond: number;
  /** SVC_PUBLIC_RATE_BURST (default 60): the bucket's size, what a client may ask at once after a quiet while. */
  burst: number;
  /** SVC_PUBLIC_MAX_IN_FLIGHT (default 6, a browser's connections per host): requests in progress at once. */
  maxInFlight: number;
  /** SVC_TRUSTED_PROXIES: addresses or CIDR ranges of proxies whose X-Forwarded-For names the client. */
  trustedProxies: string[];
}

/** SVC_GITHUB_APP_*: an App configured in the environment, and the /github-app/* registration routes. */
export interface GitHubAppSettings {
  /** SVC_GITHUB_APP_REGISTRATION: unset means on, except in public mode or once an App is fully configured. */
  registration: 'on' | 'off' | undefined;
  /** SVC_APP_CRED_STORE: a registered App's credentials are shown once on the page, or stored 0600 in the data dir. */
  credentialStore: 'page' | 'data-dir';
  /** SVC_GITHUB_APP_ID, SVC_GITHUB_APP_PRIVATE_KEY (a PEM or a file path), SVC_GITHUB_APP_INSTALLATION_ID. */
  app: { appId: string; privateKey: string; installationId: string | undefined } | undefined;
}

function parseGitHubApp(env: NodeJS.ProcessEnv): GitHubAppSettings {
  const registration = env.SVC_GITHUB_APP_REGISTRATION || undefined;
  if (registration !== undefined && registration !== 'on' && registration !== 'off')
    throw new Error(`SVC_GITHUB_APP_REGISTRATION must be on or off, not "${registration}"`);
  const credentialStore = env.SVC_APP_CRED_STORE || 'page';
  if (credentialStore !== 'page' && credentialStore !== 'data-dir')
    throw new Error(`SVC_APP_CRED_STORE must be page or data-dir, not "${credentialStore}"`);
  const appId = env.SVC_GITHUB_APP_ID || undefined;
  const privateKey = env.SVC_GITHUB_APP_PRIVATE_KEY || undefined;
  const installationId = env.SVC_GITHUB_APP_INSTALLATION_ID || undefined;
  for (const [name, value] of [
    ['SVC_GITHUB_APP_ID', appId],
    ['SVC_GITHUB_APP_INSTALLATION_ID', installationId],
  ] as const)
    if (value !== undefined && !/^\d{1,20}$/.test(value)) throw new Error(`${name} must be a number, got "${value}"`);
  if (Boolean(appId) !== Boolean(privateKey))
    throw new Error('SVC_GITHUB_APP_ID and SVC_GITHUB_APP_PRIVATE_KEY go together: set both or neither');
  if (installationId && !appId) throw new Error('SVC_GITHUB_APP_INSTALLATION_ID needs SVC_GITHUB_APP_ID');
  return {
    registration,
    credentialStore,
    app: appId && privateKey ? { appId, privateKey, installationId } : undefined,
  };
}

/**
 * SVC_GITHUB_GIT_URL: the prefix svc's git puts in place of https://github.com/ (a mirror, a proxy,
 * or a directory of bare repositories). https, http or file only; no credentials: svc sends its own.
 */
function parseGitHubGitUrl(text: string | undefined): string {
  if (!text) return GITHUB_GIT_URL;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`SVC_GITHUB_GIT_URL must be a URL (https://…, http://… or file:///…), not "${text}"`);
  }
  if (!['https:', 'http:', 'file:'].includes(url.protocol))
    throw new Error(`SVC_GITHUB_GIT_URL must be an https, http or file URL, not ${url.protocol}`);
  if (url.username || url.password || url.search || url.hash)
    throw new Error('SVC_GITHUB_GIT_URL takes no credentials, query or fragment: svc sends its own token');
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

function portFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const port = intFromEnv(env, name, fallback);
  if (port > 65535) throw new Error(`${name} must be a port (0-65535), got "${env[name]}"`);
  return port;
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** Minutes, fractions allowed (0 = off). */
function minutesFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number of minutes, got "${raw}"`);
  return value;
}

function positiveIntOrNull(env: NodeJS.ProcessEnv, name: string): number | null {
  const value = intFromEnv(env, name, 0);
  if (env[name] !== undefined && env[name] !== '' && value < 1)
    throw new Error(`${name} must be at least 1, got "${env[name]}"`);
  return value || null;
}

function parseAuthMode(env: NodeJS.ProcessEnv): SvcConfig['auth'] {
  const mode = env.SVC_AUTH || 'token';
  if (mode !== 'token' && mode !== 'public') throw new Error(`SVC_AUTH must be token or public, not "${mode}"`);
  const publicAllowlist = (env.SVC_PUBLIC_ALLOWLIST ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (mode === 'public' && publicAllowlist.length === 0)
    throw new Error('SVC_AUTH=public needs SVC_PUBLIC_ALLOWLIST: the owners or owner/repo projects spectators may see');
  return { mode, publicAllowlist, spectatorLimits: parseSpectatorLimits(env) };
}

function parseSpectatorLimits(env: NodeJS.ProcessEnv): SpectatorLimitSettings {
  const trustedProxies = (env.SVC_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of trustedProxies) {
    const [address, bits, extra] = entry.split('/');
    const version = isIP(address!);
    const maxBits = version === 6 ? 128 : 32;
    if (!version || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > maxBits)))
      throw new Error(`SVC_TRUSTED_PROXIES must list addresses or CIDR ranges (10.0.0.0/8, ::1), not "${entry}"`);
  }
  return {
    ratePerSecond: positiveIntOrNull(env, 'SVC_PUBLIC_RATE_PER_SECOND') ?? 10,
    burst: positiveIntOrNull(env, 'SVC_PUBLIC_RATE_BURST') ?? 60,
    maxInFlight: positiveIntOrNull(env, 'SVC_PUBLIC_MAX_IN_FLIGHT') ?? 6,
    trustedProxies,
  };
}

/** SVC_DISK_MIN_FREE_MIB and SVC_DISK_MIN_FREE_PERCENT; `0` or `off` turns either off. */
function parseDiskFloor(env: NodeJS.ProcessEnv): DiskFloor {
  const read = (name: string, fallback: number, valid: (value: number) => boolean, what: string) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'off') return 0;
    const value = Number(raw);
    if (!valid(value)) throw new Error(`${name} must be ${what}, or 0/off for no floor, not "${raw}"`);
    return value;
  };
  return {
    minFreeMiB: read(
      'SVC_DISK_MIN_FREE_MIB',
      DEFAULT_DISK_FLOOR.minFreeMiB,
      (value) => Number.isSafeInteger(value) && value >= 0,
      'a whole number of MiB',
    ),
    minFreePercent: read(
      'SVC_DISK_MIN_FREE_PERCENT',
      DEFAULT_DISK_FLOOR.minFreePercent,
      (value) => Number.isFinite(value) && value >= 0 && value < 100,
      'a percentage below 100',
    ),
  };
}

/** The settings in `env`; a bad value throws a ConfigurationError naming the variable and what it may be. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): SvcConfig {
  return asConfigurationError(() => readConfig(env));
}

function readConfig(env: NodeJS.ProcessEnv): SvcConfig {
  const dataDir = resolve(env.SVC_DATA_DIR || '.svc-data');
  const publicUrl = env.SVC_PUBLIC_URL?.replace(/\/+$/, '') || null;
  const preview = parsePreviewSettings(env, portFromEnv(env, 'SVC_PORT', 8080));
  return {
    instanceName: env.SVC_INSTANCE_NAME || 'svc',
    publicUrl,
    allowedHosts: allowedHosts(env, publicUrl, preview.host),
    logLevel: parseLogLevel(env.SVC_LOG_LEVEL),
    dataDir,
    host: env.SVC_HOST || '127.0.0.1',
    port: portFromEnv(env, 'SVC_PORT', 8080),
    databaseUrl: env.DATABASE_URL || join(dataDir, 'svc.sqlite'),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.SVC_TASK_QUEUE || 'svc',
    apiToken: env.SVC_API_TOKEN || undefined,
    secretsKey: checkSecretsKeySettings({
      key: env.SVC_SECRETS_KEY || undefined,
      previous: env.SVC_SECRETS_KEY_PREVIOUS || undefined,
    }),
    agentsFile: env.SVC_AGENTS_FILE || undefined,
    projectsRoot: resolve(env.SVC_PROJECTS_DIR || join(dataDir, 'projects')),
    githubToken: env.SVC_GIT_TOKEN || env.GITHUB_TOKEN || undefined,
    apiUrl: env.SVC_API_URL || undefined,
    githubApiUrl: (env.SVC_GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, ''),
    githubGitUrl: parseGitHubGitUrl(env.SVC_GITHUB_GIT_URL),
    githubApp: parseGitHubApp(env),
    workflowBundlePath: env.SVC_WORKFLOW_BUNDLE || undefined,
    temporalMetricsAddress: env.SVC_TEMPORAL_METRICS_ADDRESS || undefined,
    workerMetricsAddress: env.SVC_WORKER_METRICS_ADDRESS || undefined,
    workerCapacity: {
      // At least 2: the SDK's own minimum with a cache (it raises 1 itself); none stalled a worker.
      maxCachedWorkflows: Math.max(2, intFromEnv(env, 'SVC_WORKER_MAX_CACHED_WORKFLOWS', 64)),
      maxConcurrentActivities: Math.max(1, intFromEnv(env, 'SVC_WORKER_MAX_ACTIVITIES', 200)),
      // The SDK needs two workflow task slots when the sticky cache is on.
      maxConcurrentWorkflowTasks: Math.max(2, intFromEnv(env, 'SVC_WORKER_MAX_WORKFLOW_TASKS', 40)),
    },
    maxConcurrentRuns: positiveIntOrNull(env, 'SVC_MAX_CONCURRENT_RUNS'),
    diskFloor: parseDiskFloor(env),
    webhooks: {
      configured: env.SVC_WEBHOOKS === undefined ? null : parseConfiguredWebhooks(env.SVC_WEBHOOKS, Date.now()),
      pollMs: Math.max(100, intFromEnv(env, 'SVC_WEBHOOK_POLL_MS', 2000)),
      privateTargets: webhookPrivateTargets(env.SVC_WEBHOOK_PRIVATE_TARGETS),
      settleMs: intFromEnv(env, 'SVC_WEBHOOK_SETTLE_MS', 2000),
      // Below the delivery activity's one minute, so an attempt always ends as an answer, not a timeout.
      timeoutMs: Math.min(30_000, Math.max(1000, intFromEnv(env, 'SVC_WEBHOOK_TIMEOUT_MS', 10_000))),
      retry: {
        baseMs: Math.max(100, intFromEnv(env, 'SVC_WEBHOOK_RETRY_BASE_MS', 10_000)),
        maxAttempts: Math.max(1, intFromEnv(env, 'SVC_WEBHOOK_MAX_ATTEMPTS', 10)),
      },
    },
    reconcileIntervalMs: Math.max(1000, intFromEnv(env, 'SVC_RECONCILE_INTERVAL_MS', 5 * 60_000)),
    retention: parseRetentionSettings(env),
    reconcileStaleAfterMs: intFromEnv(env, 'SVC_RECONCILE_STALE_AFTER_MS', 60_000),
    runBranchPrefix: env.SVC_RUN_BRANCH_PREFIX || 'svc',
    temporalUiUrl: env.SVC_TEMPORAL_UI_URL?.replace(/\/+$/, '') || undefined,
    judge: { baseUrl: env.SVC_JUDGE_BASE_URL || undefined, exportToken: env.SVC_JUDGE_EXPORT_TOKEN || undefined },
    auth: parseAuthMode(env),
    lifecycleStreams: {
      maxStreams: Math.max(1, intFromEnv(env, 'SVC_EVENT_STREAM_MAX', 64)),
      keepAliveMs: Math.max(1000, intFromEnv(env, 'SVC_EVENT_STREAM_KEEPALIVE_MS', 15_000)),
      // SQLite's safety poll behind the write-ahead log's watch (PostgreSQL's is at least 5 s).
      pollMs: Math.max(50, intFromEnv(env, 'SVC_EVENT_STREAM_POLL_MS', 1000)),
    },
    sandbox: parseSandboxSettings(env),
    preview,
    runOutputMaxBytes: intFromEnv(env, 'SVC_RUN_OUTPUT_MAX_MIB', 64) * 1048576 || null,
    runTiming: {
      finalizeTimeoutMs: intFromEnv(env, 'SVC_FINALIZE_TIMEOUT_MS', DEFAULT_RUN_TIMING.finalizeTimeoutMs),
      silenceTimeoutMs:
        env.SVC_WATCHDOG_DISABLED === '1'
          ? 0
          : intFromEnv(env, 'SVC_RUN_HEARTBEAT_TIMEOUT_MS', DEFAULT_RUN_TIMING.silenceTimeoutMs),
      prPollMinMs: intFromEnv(env, 'SVC_PR_POLL_MIN_MS', DEFAULT_RUN_TIMING.prPollMinMs),
      prPollMaxMs: intFromEnv(env, 'SVC_PR_POLL_MAX_MS', DEFAULT_RUN_TIMING.prPollMaxMs),
      prWatchMaxMs: intFromEnv(env, 'SVC_PR_WATCH_MAX_MS', DEFAULT_RUN_TIMING.prWatchMaxMs),
      maxRunMs: Math.round(minutesFromEnv(env, 'SVC_MAX_RUN_MINUTES', DEFAULT_MAX_RUN_MS / 60_000) * 60_000),
    },
    planTiming: {
      mergeTimeoutMs: intFromEnv(env, 'SVC_PLAN_RUN_MERGE_TIMEOUT_MS', DEFAULT_PLAN_TIMING.mergeTimeoutMs),
      mergePollMs: Math.max(1000, intFromEnv(env, 'SVC_PLAN_RUN_MERGE_POLL_MS', DEFAULT_PLAN_TIMING.mergePollMs)),
    },
  };
}

export const dataPaths = {
  operatorToken: (dataDir: string) => join(dataDir, 'operator-token'),
  temporalPidFile: (dataDir: string) => join(dataDir, 'temporal', 'dev.pid'),
  temporalLog: (dataDir: string) => join(dataDir, 'logs', 'temporal.log'),
  sandboxes: (dataDir: string) => join(dataDir, 'sandboxes'),
  /** svc's own programs prepared to run (the supervisor stripped of its types). */
  programs: (dataDir: string) => join(dataDir, 'programs'),
  salvage: (dataDir: string) => join(dataDir, 'salvage'),
  workspaces: (dataDir: string) => join(dataDir, 'workspaces'),
  /** A GitHub App registered through /github-app/* with SVC_APP_CRED_STORE=data-dir (0600). */
  githubApp: (dataDir: string) => join(dataDir, 'github-app.json'),
  /** Held (flock) by the one `svc serve` of this data directory for its life (stack/instance-lock.ts). */
  instanceLock: (dataDir: string) => join(dataDir, 'instance.lock'),
  /** Who holds it: pid and URL, so a second `svc serve` can name it. */
  instanceRecord: (dataDir: string) => join(dataDir, 'instance.json'),
  /** The directory's own name, which names its workers' task queue (platform/data-dir-key.ts). */
  dataDirKey: (dataDir: string) => join(dataDir, 'data-dir-key'),
  /** The key project secrets are sealed with when SVC_SECRETS_KEY is unset (platform/secrets-key.ts; 0600). */
  secretsKey: (dataDir: string) => join(dataDir, 'secrets-key'),
  /** What a retention pass has taken out of use and is removing (renamed here first: one rename each). */
  trash: (dataDir: string) => join(dataDir, 'trash'),
};

/** A host name as the API compares it: lower case, without the one trailing dot a name may be written with. */
export function normalHostName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** SVC_ALLOWED_HOSTS (names or addresses, no port: any port is allowed) and the hosts svc is told it is reached at. */
function allowedHosts(env: NodeJS.ProcessEnv, publicUrl: string | null, previewHost: string | null): string[] {
  const listed = (env.SVC_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of listed)
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?)$/.test(entry))
      throw new Error(
        `SVC_ALLOWED_HOSTS must list host names without scheme or port (svc.example.com), not "${entry}"`,
      );
  const urlHost = (name: string, url: string | undefined) => {
    if (!url) return [];
    try {
      return [new URL(url).hostname];
    } catch {
      throw new Error(`${name} must be a URL (http://svc.example.com:8080), not "${url}"`);
    }
  };
  const bound = env.SVC_HOST && !isIP(env.SVC_HOST) ? [env.SVC_HOST] : [];
  const hosts = [
    ...listed,
    ...urlHost('SVC_PUBLIC_URL', publicUrl ?? undefined),
    ...urlHost('SVC_API_URL', env.SVC_API_URL),
    ...bound,
    ...(previewHost ? [previewHost] : []),
  ];
  return [...new Set(hosts.map(normalHostName))];
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** SVC_WEBHOOK_PRIVATE_TARGETS: egress entries (host:port) webhooks may reach on private addresses. */
function webhookPrivateTargets(text: string | undefined): EgressRule[] {
  let rules: EgressRule[];
  try {
    rules = parseEgressList(text, 'operator');
  } catch (error) {
    throw new Error(`SVC_WEBHOOK_PRIVATE_TARGETS: ${(error as Error).message}`);
  }
  // Only an exact entry opens a private address (platform/network-destinations.ts): a wildcard would open nothing.
  const wildcard = rules.find((rule) => !isExactRule(rule) || rule.ports === '*');
  if (wildcard)
    throw new Error(
      `SVC_WEBHOOK_PRIVATE_TARGETS: "${describeEgressRule(wildcard).replace(/ \(operator\)$/, '')}" ` +
        'is a wildcard; name each receiver as host:port',
    );
  return rules;
}
