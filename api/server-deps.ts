// What the API process is built from: settings, the read model, the Temporal gateway, the catalogs.
// Its own module: the server (api/server.ts) and the route composition (api/compose-routes.ts) both
// take it.
import type { ContainerSettings, KubernetesSettings } from '../platform/sandbox-settings.ts';
import type { RunTiming } from '../core/run-model.ts';
import type { PlanTiming } from '../core/plan-model.ts';
import { type SetupCodes } from './services/setup-codes.ts';
import { type ForgeCredentials } from '../platform/forge-credentials.ts';
import type { GitHubAppSettings, SpectatorLimitSettings } from '../platform/config.ts';
import type { AuthSettings } from './auth.ts';
import { type JudgeSettings } from './services/judge-proxy.ts';
import type { GitHubForge } from '../activities/forge/github-forge.ts';
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import type { TemporalGateway } from './services/temporal-gateway.ts';
import type { EgressRule } from '../core/egress-rules.ts';
import type { PreviewSettings } from '../platform/preview-settings.ts';
import type { ReadModel } from '../db/orm.ts';
import type { DiskFloor } from '../platform/disk-space.ts';
import type { SecretsKeys } from '../platform/secrets-key.ts';

export interface ApiServerDeps {
  host: string;
  port: number;
  version: string;
  dataDir: string;
  projectsRoot: string;
  forge: GitHubForge;
  runBranchPrefix: string;
  /** SVC_MAX_CONCURRENT_RUNS (null or absent: no instance-wide limit). */
  maxConcurrentRuns?: number | null;
  /** The free space the data directory's filesystem keeps: below it, no new run (absent: not checked). */
  diskFloor?: DiskFloor;
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
  /** Public mode: each spectator client's request rate and requests in progress (absent: unlimited). */
  spectatorLimits?: SpectatorLimitSettings;
  readModel: ReadModel;
  /** What project secrets are sealed with (platform/secrets-key.ts). */
  secretsKeys: SecretsKeys;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  /** GET /instance: what this instance calls itself, where it is reached, the sandbox backend. */
  instance?: { name: string; publicUrl: string | null; runtime: string };
  /** The Kubernetes backend's settings when agents run as pods: admission's caps (a worker counts the pods). */
  kubernetes?: KubernetesSettings | null;
  /** The images a project's `agentImage` may name, when agents run in containers or pods (SVC_AGENT_IMAGES). */
  agentImages?: Pick<ContainerSettings, 'images'> | null;
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
  /** The host names the API answers to besides loopback names and addresses (SvcConfig.allowedHosts). */
  allowedHosts?: string[];
  /** SVC_WEBHOOK_PRIVATE_TARGETS: the private receivers a registration may name. */
  webhookPrivateTargets?: EgressRule[];
}
