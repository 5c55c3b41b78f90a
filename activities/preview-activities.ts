// The I/O of a run's preview: starting its server in a sandbox like the agent's (same workspace,
// uid, memory limit and egress rules), behind the door the worker serves on a port of its range (a
// pod: behind its own Service); probing it until it is ready; watching it while it lives; stopping it.
import { Context, heartbeat } from '@temporalio/activity';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { LRU_ACTOR, type PreviewPlan } from '../core/preview.ts';
import { pullRequestWorkflowId } from '../core/run-workflows.ts';
import { RunEntity } from '../db/entities/index.ts';
import { previewTeardownUpdate } from '../workflows/messages.ts';
import type { ProjectSandboxSettings } from '../core/run-model.ts';
import { dataPaths } from '../platform/config.ts';
import { sandboxCpuLimit } from '../platform/sandbox-settings.ts';
import type { PreviewSettings } from '../platform/preview-settings.ts';
import { workspaceReady } from './environment-cache.ts';
import type { RunActivityDeps } from './run-activities.ts';
import {
  engineFacts,
  agentEgressRules,
  readJsonIfExists,
  sandboxFiles,
  chooseIsolation,
  imageRefusal,
  sandboxHostId,
  exposePreviewPod,
  removePreviewService,
  inspectSandbox,
  startSandbox,
  stopSandbox,
  DOOR_SOCKET,
  sandboxLaunch,
  type ExposeRecord,
} from '../sandbox/index.ts';

export interface PreviewActivityDeps extends RunActivityDeps {
  preview: PreviewSettings;
  temporal: Client;
}

/**
 * Started: where the proxy reaches the preview (this worker's SVC_PREVIEW_WORKER_HOST and a port of
 * its range, or a pod's Service), and the eviction limits (the project's, else the operator's).
 */
type Started =
  { ok: true; host: string; port: number; idleTtlMs: number; maxLifetimeMs: number } | { ok: false; message: string };

/** What a preview's supervisor allows beyond its lifetime: start-up (3 h at most) and a day of outages. */
const BACKSTOP_SLACK_MS = 27 * 3600 * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The preview's setup (bounded by its timeout), then its command in the setup's place. */
function previewScript(plan: PreviewPlan): string {
  const lines = ['set -u'];
  if (plan.setup) {
    const seconds = Math.max(1, Math.round(plan.setupTimeoutMs / 1000));
    lines.push(
      `timeout --kill-after=10 ${seconds} bash -c ${quote(plan.setup)} || ` +
        `{ code=$?; echo "svc preview: the setup failed (exit $code)" >&2; exit 97; }`,
    );
  }
  lines.push(`exec bash -c ${quote(plan.command)}`);
  return lines.join('\n');
}

/** Where a run's preview sandbox keeps its records, on the worker that started it. */
export function previewSandboxDir(dataDir: string, runId: string): string {
  return join(dataPaths.sandboxes(dataDir), runId, 'preview');
}

export function createPreviewActivities(deps: PreviewActivityDeps) {
  const previewDir = (runId: string) => previewSandboxDir(deps.dataDir, runId);
  /** The last lines the preview wrote on stderr (its last 4 KiB read, however much it wrote). */
  const stderrTail = (runId: string) => {
    const path = sandboxFiles(previewDir(runId)).stderr;
    if (!existsSync(path)) return '';
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, 4096));
      readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      return buffer.toString('utf8').trim().split('\n').slice(-5).join('\n').slice(-1500);
    } finally {
      closeSync(fd);
    }
  };
  const ended = (runId: string, what: string) => {
    const tail = stderrTail(runId);
    return `${what}${tail ? `: ${tail}` : ''}`;
  };
  const origin = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const limits = (plan: PreviewPlan) => ({
    // A project may keep its previews shorter than the operator allows, never longer.
    idleTtlMs: Math.min(plan.idleTtlMs ?? Infinity, deps.preview.idleTtlMs),
    maxLifetimeMs: Math.min(plan.maxLifetimeMs ?? Infinity, deps.preview.maxLifetimeMs),
  });

  return {
    /**
     * Keeps the live previews under SVC_PREVIEW_MAX_LIVE: the least recently used make room for a
     * new one (torn down through their own workflows, so each ends as a teardown would).
     */
    async makeRoomForPreview({ runId }: { runId: string }): Promise<{ evicted: string[] }> {
      const others = await deps.readModel
        .em()
        .find(RunEntity, { previewState: { $in: ['starting', 'live'] }, id: { $ne: runId } });
      const lastUse = (run: (typeof others)[number]) =>
        (run.previewLastHitAt ?? run.previewStartedAt ?? new Date(run.createdAt)).getTime();
      const victims = others
        .sort((a, b) => lastUse(a) - lastUse(b))
        .slice(0, Math.max(0, others.length - deps.preview.maxLive + 1));
      for (const victim of victims)
        await deps.temporal.workflow
          .getHandle(pullRequestWorkflowId(victim.id))
          .executeUpdate(previewTeardownUpdate, { args: [{ actor: LRU_ACTOR }] })
          .catch(() => undefined);
      return { evicted: victims.map((victim) => victim.id) };
    },

    /** Starts the preview's sandbox once (a retry finds it), and answers the worker port it is served on. */
    async startPreview({
      runId,
      plan,
      workspacePath,
      network,
      memoryLimitMiB,
      image,
      cpuMillicores,
      pod,
    }: {
      runId: string;
      plan: PreviewPlan;
      workspacePath: string;
    } & ProjectSandboxSettings): Promise<Started> {
      if (plan.type !== 'server') return { ok: false, message: 'static previews are not supported: use type: server' };
      const isolation = chooseIsolation(deps.sandbox);
      const refusal = imageRefusal(isolation, image, deps.sandbox);
      if (refusal) return { ok: false, message: refusal };
      const unmountable = await workspaceReady(deps.dataDir, runId, sandboxHostId(runId, deps.sandbox));
      if (unmountable) return { ok: false, message: unmountable };
      const inPod = isolation === 'kubernetes';
      const dir = previewDir(runId);
      const files = sandboxFiles(dir);
      if (!existsSync(files.claim)) {
        const { spec } = sandboxLaunch({
          name: `${runId}-preview`,
          image,
          cpuMillicores: sandboxCpuLimit(cpuMillicores, deps.sandbox),
          projectPod: pod ?? null,
          engineFacts:
            isolation === 'container' ? await engineFacts(deps.sandbox.container.engine).catch(() => null) : null,
          dir,
          launch: {
            argv: ['bash', '-c', previewScript(plan)],
            cwd: workspacePath,
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              LANG: 'C.UTF-8',
              PORT: String(plan.port),
              // A pod's server is reached on the pod's address (through its Service); a door's on loopback.
              HOST: inPod ? '0.0.0.0' : '127.0.0.1',
            },
            stdin: null,
            door: { port: plan.port },
          },
          isolation,
          settings: deps.sandbox,
          hostId: sandboxHostId(runId, deps.sandbox),
          egress: agentEgressRules({
            modelEndpoints: [],
            githubApiUrl: deps.githubApiUrl,
            operator: deps.sandbox.egress,
            project: network ?? null,
          }),
          callback: null,
          memoryLimitMiB: memoryLimitMiB ?? deps.sandbox.memoryLimitMiB,
          // The preview outlives the worker that starts it, like the agent.
          dieWithParent: false,
          forbidden: [deps.dataDir, deps.projectsRoot],
          trustCommand: false,
        });
        // A backstop should its workflow be gone (terminated): generous, as the supervisor's clock
        // starts now and the workflow's at live (a worker outage between the two, retries).
        spec.maxLifetimeMs = limits(plan).maxLifetimeMs + BACKSTOP_SLACK_MS;
        if (!inPod)
          spec.expose = {
            doorSocket: join(files.net, DOOR_SOCKET),
            bind: deps.preview.bind,
            firstPort: deps.preview.firstPort,
            lastPort: deps.preview.lastPort,
            record: files.exposed,
          };
        const status = await startSandbox(dir, spec);
        if (status.kind === 'exited') return { ok: false, message: ended(runId, 'the preview ended at once') };
        if (status.kind === 'lost')
          return { ok: false, message: `the preview's sandbox did not start: ${status.reason}` };
      }
      if (inPod) {
        const exposed = await exposePreviewPod(deps.sandbox.kubernetes, `${runId}-preview`, plan.port);
        if ('error' in exposed) return { ok: false, message: exposed.error };
        return { ok: true, host: exposed.host, port: plan.port, ...limits(plan) };
      }
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(50)) {
        const record = readJsonIfExists<ExposeRecord>(files.exposed);
        if (record && 'error' in record) return { ok: false, message: record.message };
        if (record) return { ok: true, host: deps.preview.workerHost, port: record.port, ...limits(plan) };
        if (inspectSandbox(files).kind === 'exited') return { ok: false, message: ended(runId, 'the preview ended') };
      }
      return { ok: false, message: 'the preview was given no port in time' };
    },

    /**
     * Two-phase readiness: any HTTP answer within the connect timeout, then a 2xx or 3xx on the
     * readiness path within the readiness timeout; a preview that ends meanwhile has failed.
     */
    async awaitPreviewReady({
      runId,
      plan,
      host,
      port,
    }: {
      runId: string;
      plan: PreviewPlan;
      /** Absent in histories from before previews had hosts: this worker's. */
      host?: string;
      port: number;
    }) {
      const files = sandboxFiles(previewDir(runId));
      const started = Date.now();
      let answered: number | null = null;
      for (;;) {
        heartbeat();
        if (inspectSandbox(files).kind !== 'running') return { ok: false, message: ended(runId, 'the preview ended') };
        const status = await fetch(
          `${origin(host ?? deps.preview.workerHost, port)}${answered === null ? '/' : plan.readinessPath}`,
          {
            redirect: 'manual',
            signal: AbortSignal.timeout(5000),
          },
        ).then(
          (response) => (void response.body?.cancel(), response.status),
          () => null,
        );
        if (status !== null) answered ??= Date.now();
        if (answered !== null && status !== null && status >= 200 && status < 400) return { ok: true, message: null };
        if (answered === null && Date.now() - started > plan.connectTimeoutMs)
          return {
            ok: false,
            message: `the preview did not answer on port ${plan.port} within ${plan.connectTimeoutMs / 1000} s`,
          };
        if (answered !== null && Date.now() - answered > plan.readinessTimeoutMs)
          return {
            ok: false,
            message:
              `${plan.readinessPath} did not answer 2xx or 3xx ` +
              `within ${plan.readinessTimeoutMs / 1000} s (last ${status})`,
          };
        await sleep(250);
      }
    },

    /** Returns when the preview's sandbox ends by itself (or when the workflow stops watching). */
    async watchPreview({ runId }: { runId: string }): Promise<{ message: string }> {
      const files = sandboxFiles(previewDir(runId));
      const cancelled = Context.current().cancellationSignal;
      while (!cancelled.aborted) {
        heartbeat();
        if (inspectSandbox(files).kind !== 'running') return { message: ended(runId, 'the preview ended') };
        await sleep(1000);
      }
      return { message: 'no longer watched' };
    },

    /** Stops the preview's sandbox (its server, its door, its port) and waits for it to end. */
    async stopPreview({ runId }: { runId: string }): Promise<{ stopped: boolean }> {
      const files = sandboxFiles(previewDir(runId));
      if (!existsSync(files.claim)) return { stopped: true };
      stopSandbox(files);
      let stopped = false;
      for (const deadline = Date.now() + 15_000; !stopped && Date.now() < deadline; await sleep(100))
        stopped = inspectSandbox(files).kind !== 'running';
      // The pod's deletion takes its Service along; deleting it too is tidy, not essential.
      if (chooseIsolation(deps.sandbox) === 'kubernetes')
        await removePreviewService(deps.sandbox.kubernetes, `${runId}-preview`).catch(() => undefined);
      return { stopped };
    },
  };
}

export type PreviewActivities = ReturnType<typeof createPreviewActivities>;
