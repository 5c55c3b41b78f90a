// A data directory's retention pass: the workspaces, sandbox directories and salvage bundles of
// runs that ended long enough ago (core/retention-policy.ts), the trash of an interrupted pass, and
// the read model's events past their retention. Runs on a worker of that data directory (its own
// task queue); safe to repeat and to stop at any point: nothing a live run or preview uses is due.
import { heartbeat } from '@temporalio/activity';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  environmentsDue,
  RETENTION_KINDS,
  runFilesDue,
  type KeptEnvironment,
  type RetentionKind,
  type RunRetentionFacts,
} from '../core/retention-policy.ts';
import { RunEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { RetentionRepository } from '../db/repositories/retention.repository.ts';
import { dataPaths } from '../platform/config.ts';
import { dataDirKey } from '../platform/data-dir-key.ts';
import { svcMetrics } from '../platform/metrics.ts';
import type { RetentionSettings } from '../platform/retention-settings.ts';
import { sandboxFiles, supervisorHolds } from '../sandbox/index.ts';
import { emptyTrash, removeTree, treeBytes } from './retention/disk-trees.ts';
import {
  entryInUse,
  entryLastUsedMs,
  environmentBuildsDir,
  environmentsRoot,
  removeEntry,
  runHome,
  runLayers,
  unmountRunLayers,
} from './environment-cache.ts';

export interface RetentionActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  retention: RetentionSettings;
}

export interface RetentionReport {
  dataDirKey: string;
  host: string;
  removed: Record<RetentionKind, number>;
  reclaimedBytes: Record<RetentionKind, number>;
}

/** A half-made workspace (`<run>.partial-<run>`) of a cut that died is left this long before it goes. */
const PARTIAL_GRACE_MS = 24 * 3600_000;
const RUNS_PER_READ = 500;
/** A run's sandbox directories: its own, and a resumed generation's (`<run>-g2`). */
const GENERATION = /-g\d+$/;

const zero = () => Object.fromEntries(RETENTION_KINDS.map((kind) => [kind, 0])) as Record<RetentionKind, number>;
const metricKind = (kind: RetentionKind) => kind.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

export function createRetentionActivities(deps: RetentionActivityDeps) {
  const trash = dataPaths.trash(deps.dataDir);
  const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

  /** What the read model knows of `runIds` (a run it does not know is absent: nothing of it is due). */
  async function runFacts(runIds: string[]): Promise<Map<string, RunRetentionFacts>> {
    const facts = new Map<string, RunRetentionFacts>();
    for (let i = 0; i < runIds.length; i += RUNS_PER_READ) {
      const rows = await deps.readModel
        .em()
        .find(
          RunEntity,
          { id: { $in: runIds.slice(i, i + RUNS_PER_READ) } },
          { fields: ['id', 'state', 'endedAt', 'prState', 'previewState'] },
        );
      for (const row of rows)
        facts.set(row.id, {
          state: row.state,
          endedAtMs: row.endedAt ? row.endedAt.getTime() : null,
          prState: row.prState ?? null,
          previewState: row.previewState ?? null,
        });
      heartbeat();
    }
    return facts;
  }

  /** Whether none of `paths` is (any longer) a mount: one that cannot be unmounted now is left for a later pass. */
  const unmounted = async (paths: string[]) => {
    try {
      await unmountRunLayers(paths);
      return true;
    } catch {
      return false;
    }
  };

  /** Whether a supervisor may still touch the sandbox directory or one within (a finalize's, a preview's). */
  const held = (dir: string) =>
    [dir, join(dir, 'finalize'), join(dir, 'preview')].some((sandbox) => supervisorHolds(sandboxFiles(sandbox)));

  return {
    async sweepDataDirectory(): Promise<RetentionReport> {
      const removed = zero();
      const reclaimedBytes = zero();
      const take = (kind: RetentionKind, path: string, removedBytes?: number) => {
        const bytes = removedBytes ?? removeTree(path, trash);
        if (bytes === null) return;
        removed[kind]++;
        reclaimedBytes[kind] += bytes;
        heartbeat();
      };
      const now = Date.now();
      emptyTrash(trash);

      const workspacesDir = dataPaths.workspaces(deps.dataDir);
      const sandboxesDir = dataPaths.sandboxes(deps.dataDir);
      const workspaces = list(workspacesDir);
      const sandboxes = list(sandboxesDir);
      const runOf = (entry: string) => entry.replace(GENERATION, '');
      const facts = await runFacts([
        ...new Set([...workspaces.filter((entry) => !entry.includes('.partial-')), ...sandboxes.map(runOf)]),
      ]);
      const files = { sandboxesMs: deps.retention.sandboxesMs, workspacesMs: deps.retention.workspacesMs };

      for (const entry of workspaces) {
        const path = join(workspacesDir, entry);
        const due = entry.includes('.partial-')
          ? now - statSync(path, { throwIfNoEntry: false })!.mtimeMs >= PARTIAL_GRACE_MS
          : runFilesDue(facts.get(entry) ?? null, files, now).workspace;
        if (!due) continue;
        // Over a kept environment the workspace and home are mounts: unmounted first, never removed through.
        if (!(await unmounted([path, runHome(deps.dataDir, entry)]))) continue;
        take('workspaces', path);
        // The run's own layers (its checkout and home under the mounts) go with its workspace.
        removeTree(runLayers(deps.dataDir, entry), trash);
      }
      for (const entry of sandboxes) {
        const path = join(sandboxesDir, entry);
        if (!runFilesDue(facts.get(runOf(entry)) ?? null, files, now).sandbox || held(path)) continue;
        if (await unmounted([join(path, 'home')])) take('sandboxes', path);
      }
      if (deps.retention.environmentsMs !== null)
        sweepEnvironments(deps.dataDir, deps.retention.environmentsMs, now, take);
      if (deps.retention.salvageMs !== null) {
        const salvageDir = dataPaths.salvage(deps.dataDir);
        for (const entry of list(salvageDir)) {
          const path = join(salvageDir, entry);
          const stats = statSync(path, { throwIfNoEntry: false });
          if (stats && now - stats.mtimeMs >= deps.retention.salvageMs) take('salvage', path);
        }
      }
      if (deps.retention.eventsMs !== null) {
        const pruned = await new RetentionRepository(deps.readModel).pruneEventsBefore(
          new Date(now - deps.retention.eventsMs),
          () => heartbeat(),
        );
        removed.runEvents = pruned.runEvents;
        removed.lifecycleEvents = pruned.lifecycleEvents;
      }

      const report = { dataDirKey: dataDirKey(deps.dataDir), host: hostname(), removed, reclaimedBytes };
      await new RetentionRepository(deps.readModel).recordPass({ ...report, finishedAt: new Date() });
      for (const kind of RETENTION_KINDS) {
        if (removed[kind]) svcMetrics.retentionRemoved.inc({ kind: metricKind(kind) }, removed[kind]);
        if (reclaimedBytes[kind])
          svcMetrics.retentionReclaimedBytes.inc({ kind: metricKind(kind) }, reclaimedBytes[kind]);
      }
      return report;
    },
  };
}

/**
 * Kept environments unused for `environmentsMs` and mounted by no run, least recently used first
 * (each project's own: an entry is never shared across projects), and builds long ended.
 */
function sweepEnvironments(
  dataDir: string,
  environmentsMs: number,
  now: number,
  take: (kind: RetentionKind, path: string, removedBytes: number) => void,
): void {
  const root = environmentsRoot(dataDir);
  const builds = environmentBuildsDir(dataDir);
  const entries: KeptEnvironment[] = [];
  for (const project of existsSync(root) ? readdirSync(root) : []) {
    const dir = join(root, project);
    if (dir === builds) continue;
    for (const key of readdirSync(dir)) {
      const path = join(dir, key);
      const lastUsedMs = entryLastUsedMs(path);
      // A partial entry (a keep that died) is as unused as its directory is old.
      const age = lastUsedMs ?? statSync(path, { throwIfNoEntry: false })?.mtimeMs;
      if (age !== undefined) entries.push({ path, lastUsedMs: age, inUse: entryInUse(path) });
    }
  }
  const trash = dataPaths.trash(dataDir);
  for (const path of environmentsDue(entries, environmentsMs, now)) {
    const bytes = treeBytes(path);
    if (removeEntry(path, trash)) take('environments', path, bytes);
  }
  for (const build of existsSync(builds) ? readdirSync(builds) : []) {
    const path = join(builds, build);
    const sandbox = sandboxFiles(join(path, 'sandbox'));
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats && now - stats.mtimeMs >= PARTIAL_GRACE_MS && !supervisorHolds(sandbox)) removeTree(path, trash);
  }
}
