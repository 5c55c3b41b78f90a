// How the local backend isolates agents, as the operator configures it. Bubblewrap is the only
// isolation svc offers by default: `SVC_SANDBOX=auto` (the default) and `bubblewrap` need it
// working; a plain process (`process`, or `auto` on a machine without bubblewrap) is refused
// unless the operator opts in with SVC_ALLOW_UNSANDBOXED=1, and then every run says so.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { agentImageRefusal, type Isolation, type SandboxSettings } from '../../platform/sandbox-settings.ts';

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

export class SandboxUnavailableError extends Error {}

/** The isolation runs get; throws when no sandbox is available and the operator did not opt out. */
export function chooseIsolation(settings: SandboxSettings): Isolation {
  if (settings.mode === 'process' || settings.mode === 'container' || settings.mode === 'kubernetes')
    return settings.mode;
  if (bubblewrapWorks()) return 'bubblewrap';
  const why =
    'bubblewrap cannot build a sandbox on this machine ' +
    '(install the bubblewrap package; user namespaces must be allowed)';
  if (settings.mode === 'bubblewrap' || !settings.allowUnsandboxed)
    throw new SandboxUnavailableError(`${why}; svc refuses to run agents unsandboxed unless SVC_ALLOW_UNSANDBOXED=1`);
  return 'process';
}

/** Why a sandbox may not run a project's `agentImage`, or null: only containers and pods run one. */
export function imageRefusal(isolation: Isolation, image: string | null | undefined, settings: SandboxSettings) {
  return isolation === 'container' || isolation === 'kubernetes' ? agentImageRefusal(image, settings.container) : null;
}

function isolationOrNull(settings: SandboxSettings): Isolation | null {
  try {
    return chooseIsolation(settings);
  } catch {
    return null;
  }
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
 * An unsandboxed agent is svc's own process: it keeps svc's uid, and so does its workspace (git
 * refuses to work in a tree another uid owns).
 */
export function sandboxHostId(runId: string, settings: SandboxSettings): number | null {
  if (process.getuid?.() !== 0) return null;
  if (isolationOrNull(settings) === 'process') return null;
  return settings.uidBase + (createHash('sha256').update(runId).digest().readUInt32BE(0) % UID_RANGE);
}

/**
 * Whether a run's workspace may hard-link its project clone's object files instead of copying them:
 * only when its agent runs under a uid of its own on this host's files. The shared files stay root's
 * and read-only (git writes objects 0444), so the agent reads them and can never change the ones
 * the next run is cut from. A pod gets a copy of its workspace anyway.
 */
export function workspaceSharesObjects(runId: string, settings: SandboxSettings): boolean {
  return sandboxHostId(runId, settings) !== null && isolationOrNull(settings) !== 'kubernetes';
}
