// How the local backend isolates an agent: bubblewrap when the machine allows it (a read-only view
// of the host, its own PID namespace, only the workspace and a per-run home and TMPDIR writable),
// a plain process otherwise. SVC_SANDBOX=bubblewrap|process|auto (default auto) chooses.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { LaunchSpec } from './files.ts';

export type Isolation = 'bubblewrap' | 'process';

let probed: boolean | undefined;

/** Whether bubblewrap can create its namespaces here (containers often forbid it). */
export function bubblewrapWorks(): boolean {
  probed ??= (() => {
    try {
      execFileSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', 'true'], { stdio: 'ignore', timeout: 10_000 });
      return true;
    } catch {
      return false;
    }
  })();
  return probed;
}

export interface SandboxSettings {
  mode: 'auto' | Isolation;
  /** Extra bind mounts (SVC_SANDBOX_BINDS="src:dst,src2:dst2"), e.g. a shared package cache. */
  binds: { source: string; target: string }[];
  /** Default memory limit of an agent's sandbox (SVC_SANDBOX_MEMORY_MIB); a project's own wins. */
  memoryLimitMiB: number | null;
}

export function parseSandboxSettings(env: NodeJS.ProcessEnv): SandboxSettings {
  const mode = env.SVC_SANDBOX || 'auto';
  if (mode !== 'auto' && mode !== 'bubblewrap' && mode !== 'process') throw new Error(`SVC_SANDBOX must be auto, bubblewrap or process, not "${mode}"`);
  const binds = (env.SVC_SANDBOX_BINDS ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const [source, target] = pair.split(':');
      return { source: source!, target: target || source! };
    });
  const memory = env.SVC_SANDBOX_MEMORY_MIB ? Number(env.SVC_SANDBOX_MEMORY_MIB) : null;
  if (memory !== null && !(Number.isInteger(memory) && memory >= 16)) throw new Error(`SVC_SANDBOX_MEMORY_MIB must be a whole number of MiB, at least 16, not "${env.SVC_SANDBOX_MEMORY_MIB}"`);
  return { mode, binds, memoryLimitMiB: memory };
}

export function chooseIsolation(settings: SandboxSettings): Isolation {
  if (settings.mode !== 'auto') return settings.mode;
  return bubblewrapWorks() ? 'bubblewrap' : 'process';
}

/**
 * Wraps a launch in the sandbox. `dieWithParent` ties the sandbox to the process that starts it:
 * right for the agent (its parent is its supervisor), wrong for the finalizer, whose parent is a
 * worker that may die while the finalizer must go on.
 */
export function isolate(spec: LaunchSpec, isolation: Isolation, homeDir: string, settings: SandboxSettings, options: { dieWithParent?: boolean } = {}): LaunchSpec {
  if (isolation === 'process') return spec;
  // The host stays visible read-only, /tmp included (svc itself, the agent CLI, git configuration
  // and mirrors may live there); the sandbox writes its temporary files to a private TMPDIR.
  const tmpDir = `${homeDir}/tmp`;
  mkdirSync(tmpDir, { recursive: true });
  const argv = [
    'bwrap',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--bind', spec.cwd, spec.cwd,
    '--bind', homeDir, homeDir,
    '--bind', tmpDir, tmpDir,
    ...settings.binds.flatMap((bind) => ['--bind', bind.source, bind.target]),
    '--unshare-pid',
    '--unshare-ipc',
    ...(options.dieWithParent === false ? [] : ['--die-with-parent']),
    '--chdir', spec.cwd,
    '--',
    ...spec.argv,
  ];
  return { ...spec, argv, env: { ...spec.env, HOME: homeDir, TMPDIR: tmpDir } };
}
