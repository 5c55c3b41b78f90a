// How the local backend isolates an agent: bubblewrap when the machine allows it (a read-only view
// of the host, a private /tmp and PID namespace, the workspace and a per-run home writable), a
// plain process otherwise. SVC_SANDBOX=bubblewrap|process|auto (default auto) chooses.
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
  return { mode, binds };
}

export function chooseIsolation(settings: SandboxSettings): Isolation {
  if (settings.mode !== 'auto') return settings.mode;
  return bubblewrapWorks() ? 'bubblewrap' : 'process';
}

export function isolate(spec: LaunchSpec, isolation: Isolation, homeDir: string, settings: SandboxSettings): LaunchSpec {
  if (isolation === 'process') return spec;
  mkdirSync(homeDir, { recursive: true });
  const argv = [
    'bwrap',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--bind', spec.cwd, spec.cwd,
    '--bind', homeDir, homeDir,
    ...settings.binds.flatMap((bind) => ['--bind', bind.source, bind.target]),
    '--unshare-pid',
    '--unshare-ipc',
    '--die-with-parent',
    '--chdir', spec.cwd,
    '--',
    ...spec.argv,
  ];
  return { ...spec, argv, env: { ...spec.env, HOME: homeDir } };
}
