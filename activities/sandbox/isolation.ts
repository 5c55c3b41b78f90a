// How the local backend isolates agents, as the operator configures it. Bubblewrap is the only
// isolation svc offers by default: `SVC_SANDBOX=auto` (the default) and `bubblewrap` need it
// working; a plain process (`process`, or `auto` on a machine without bubblewrap) is refused
// unless the operator opts in with SVC_ALLOW_UNSANDBOXED=1, and then every run says so.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { parseEgressList, type EgressRule } from '../../core/egress-rules.ts';
import type { Bind } from './bubblewrap.ts';

export type Isolation = 'bubblewrap' | 'process';

let probed: boolean | undefined;

/** Whether bubblewrap can build svc's sandbox here: user, network and PID namespaces, no nested ones. */
export function bubblewrapWorks(): boolean {
  probed ??= (() => {
    try {
      const args = [
        '--unshare-user',
        '--disable-userns',
        '--unshare-net',
        '--unshare-pid',
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--die-with-parent',
        'true',
      ];
      execFileSync('bwrap', args, { stdio: 'ignore', timeout: 10_000 });
      // A root svc drops each sandbox to an unprivileged uid first.
      if (process.getuid?.() === 0)
        execFileSync('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', '--', 'bwrap', ...args], {
          stdio: 'ignore',
          timeout: 10_000,
        });
      return true;
    } catch {
      return false;
    }
  })();
  return probed;
}

export interface SandboxSettings {
  mode: 'auto' | Isolation;
  /** SVC_ALLOW_UNSANDBOXED=1: the operator accepts agents running as plain processes. */
  allowUnsandboxed: boolean;
  /** Extra bind mounts (SVC_SANDBOX_BINDS="src[:dst][:rw],…"), read-only unless marked rw. */
  binds: Bind[];
  /** Default memory limit of an agent's sandbox (SVC_SANDBOX_MEMORY_MIB); a project's own wins. */
  memoryLimitMiB: number | null;
  /** The operator's egress allowlist entries (SVC_SANDBOX_EGRESS). */
  egress: EgressRule[];
  /** Extra read-only toolchain directories (SVC_SANDBOX_TOOLCHAIN, colon-separated). */
  toolchain: string[];
  /** First host uid of the range sandboxes run as when svc is root (SVC_SANDBOX_UID_BASE). */
  uidBase: number;
  /** Processes and threads one sandbox may have at once when svc is root (SVC_SANDBOX_MAX_PROCESSES). */
  maxProcesses: number;
}

export class SandboxUnavailableError extends Error {}

function parseBinds(text: string | undefined): Bind[] {
  return (text ?? '')
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const parts = entry.split(':');
      const writable = parts.length > 1 && parts[parts.length - 1] === 'rw';
      const mode = parts[parts.length - 1] === 'rw' || parts[parts.length - 1] === 'ro';
      const [source, target] = mode ? parts.slice(0, -1) : parts;
      if (!source?.startsWith('/') || (target !== undefined && !target.startsWith('/')))
        throw new Error(`SVC_SANDBOX_BINDS: "${entry}" is not src[:dst][:ro|rw] with absolute paths`);
      return { source, target: target || source, writable };
    });
}

export function parseSandboxSettings(env: NodeJS.ProcessEnv): SandboxSettings {
  const mode = env.SVC_SANDBOX || 'auto';
  if (mode !== 'auto' && mode !== 'bubblewrap' && mode !== 'process')
    throw new Error(`SVC_SANDBOX must be auto, bubblewrap or process, not "${mode}"`);
  const allowUnsandboxed = env.SVC_ALLOW_UNSANDBOXED === '1';
  if (mode === 'process' && !allowUnsandboxed) {
    throw new Error(
      'SVC_SANDBOX=process runs agents with no isolation at all: set SVC_ALLOW_UNSANDBOXED=1 as well if that is really meant',
    );
  }
  const memory = env.SVC_SANDBOX_MEMORY_MIB ? Number(env.SVC_SANDBOX_MEMORY_MIB) : null;
  if (memory !== null && !(Number.isInteger(memory) && memory >= 16))
    throw new Error(
      `SVC_SANDBOX_MEMORY_MIB must be a whole number of MiB, at least 16, not "${env.SVC_SANDBOX_MEMORY_MIB}"`,
    );
  let egress: EgressRule[];
  try {
    egress = parseEgressList(env.SVC_SANDBOX_EGRESS, 'operator');
  } catch (error) {
    throw new Error(`SVC_SANDBOX_EGRESS: ${(error as Error).message}`);
  }
  const uidBase = env.SVC_SANDBOX_UID_BASE ? Number(env.SVC_SANDBOX_UID_BASE) : 2_000_000;
  if (!Number.isInteger(uidBase) || uidBase < 1000 || uidBase > 3_000_000_000)
    throw new Error(
      `SVC_SANDBOX_UID_BASE must be a uid between 1000 and 3000000000, not "${env.SVC_SANDBOX_UID_BASE}"`,
    );
  const toolchain = (env.SVC_SANDBOX_TOOLCHAIN ?? '').split(':').filter(Boolean);
  const maxProcesses = env.SVC_SANDBOX_MAX_PROCESSES ? Number(env.SVC_SANDBOX_MAX_PROCESSES) : 1024;
  if (!Number.isInteger(maxProcesses) || maxProcesses < 16)
    throw new Error(
      `SVC_SANDBOX_MAX_PROCESSES must be a whole number, at least 16, not "${env.SVC_SANDBOX_MAX_PROCESSES}"`,
    );
  return {
    mode,
    allowUnsandboxed,
    binds: parseBinds(env.SVC_SANDBOX_BINDS),
    memoryLimitMiB: memory,
    egress,
    toolchain,
    uidBase,
    maxProcesses,
  };
}

/** The isolation runs get; throws when no sandbox is available and the operator did not opt out. */
export function chooseIsolation(settings: SandboxSettings): Isolation {
  if (settings.mode === 'process') return 'process';
  if (bubblewrapWorks()) return 'bubblewrap';
  const why =
    'bubblewrap cannot build a sandbox on this machine (install the bubblewrap package; user namespaces must be allowed)';
  if (settings.mode === 'bubblewrap' || !settings.allowUnsandboxed)
    throw new SandboxUnavailableError(`${why}; svc refuses to run agents unsandboxed unless SVC_ALLOW_UNSANDBOXED=1`);
  return 'process';
}

/** The warning every unsandboxed run carries on its sandbox.started event, and start-up prints. */
export const UNSANDBOXED_WARNING =
  "agents run as plain processes with svc's own rights (SVC_ALLOW_UNSANDBOXED=1): nothing isolates them";

/** 2^30 uids: two of a thousand runs alive at once share one with odds of about 1 in 2000. */
const UID_RANGE = 2 ** 30;

/**
 * The host uid (and gid) a run's sandbox becomes when svc runs as root: one per run (hashed from
 * its id), from a range no account uses. Two runs sharing one is rare, and even then their mount,
 * PID and network namespaces keep them apart; the uid is a second wall, not the only one.
 */
export function sandboxHostId(runId: string, settings: Pick<SandboxSettings, 'uidBase'>): number | null {
  if (process.getuid?.() !== 0) return null;
  return settings.uidBase + (createHash('sha256').update(runId).digest().readUInt32BE(0) % UID_RANGE);
}
