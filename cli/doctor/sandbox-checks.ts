// `svc doctor --local`, the sandbox half: whether workers can isolate agents as configured, and
// what earlier runs left in the data directory.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminalRunState, type RunState } from '../../core/run-states.ts';
import { RunEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { dataPaths, type SvcConfig } from '../../platform/config.ts';
import type { Finding } from './finding.ts';

/** The agents' isolation as workers will choose it: bubblewrap probed, a container engine or the cluster asked. */
export async function sandboxCheck(config: SvcConfig): Promise<Finding> {
  if (config.sandbox.mode === 'container') {
    const name = 'container_engine';
    const { containerBackendReady } = await import('../../sandbox/index.ts');
    try {
      return { name, level: 'ok', detail: await containerBackendReady(config.sandbox.container) };
    } catch (error) {
      return { name, level: 'fail', message: (error as Error).message, hint: 'docs/sandboxes.md, Running it' };
    }
  }
  if (config.sandbox.mode === 'kubernetes') {
    const name = 'kubernetes_api';
    const { kubernetesBackendReady } = await import('../../sandbox/index.ts');
    try {
      return { name, level: 'ok', detail: await kubernetesBackendReady(config.sandbox.kubernetes) };
    } catch (error) {
      return {
        name,
        level: 'fail',
        message: (error as Error).message,
        hint: 'docs/sandboxes.md, The Kubernetes backend',
      };
    }
  }
  const name = 'bwrap';
  if (config.sandbox.mode === 'process')
    return { name, level: 'warn', message: "SVC_SANDBOX=process: agents run unsandboxed, with svc's own rights" };
  // The probe workers run before they start: user, network and PID namespaces with bubblewrap.
  const { bubblewrapWorks } = await import('../../sandbox/index.ts');
  if (bubblewrapWorks()) return { name, level: 'ok', detail: "bubblewrap builds svc's sandbox on this host" };
  const why = 'bubblewrap cannot build a sandbox here';
  const hint = 'install bubblewrap and allow unprivileged user namespaces';
  return config.sandbox.mode === 'auto' && config.sandbox.allowUnsandboxed
    ? { name, level: 'warn', message: `${why}: agents will run unsandboxed (SVC_ALLOW_UNSANDBOXED=1)`, hint }
    : { name, level: 'fail', message: `${why}: workers refuse to start`, hint };
}

/**
 * Leftovers in workspaces/ and sandboxes/: half-made workspace cuts (`*.partial-*`, from a worker
 * that died mid-copy) and directories of runs the read model does not know. Workspaces of ended
 * runs are counted, not flagged: the retention pass removes them (docs/operations.md).
 */
export async function staleWorkspacesCheck(dataDir: string, readModel: ReadModel | undefined): Promise<Finding> {
  const entries = [dataPaths.workspaces(dataDir), dataPaths.sandboxes(dataDir)].flatMap((root) =>
    existsSync(root) ? readdirSync(root).map((entry) => ({ root, entry })) : [],
  );
  const runIds = [...new Set(entries.map(({ entry }) => entry).filter((entry) => !entry.includes('.partial-')))];
  const states = new Map<string, RunState>();
  if (readModel && runIds.length)
    for (const run of await readModel.em().find(RunEntity, { id: { $in: runIds } }, { fields: ['id', 'state'] }))
      states.set(run.id, run.state);
  const stale = entries
    .filter(({ entry }) => entry.includes('.partial-') || (readModel !== undefined && !states.has(entry)))
    .map(({ root, entry }) => join(root, entry));
  const ended = [...states.values()].filter((state) => isTerminalRunState(state)).length;
  const detail = `${ended} of ended runs kept`;
  if (!stale.length) return { name: 'stale_sandbox_workspaces', level: 'ok', detail };
  return {
    name: 'stale_sandbox_workspaces',
    level: 'warn',
    message: `${stale.length} left behind: ${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', …' : ''}`,
    hint: 'no run owns them: remove them with rm -rf',
    detail,
  };
}
