// svc's side of the hand-over: the commits a sandbox left as a git bundle are fetched into the
// project clone (svc's own repository: its config, no hooks of the agent's), pushed to the run's
// branch with svc's credential, and measured there. When the push fails, the work is salvaged
// from the same place: a rescue branch on origin and the bundle kept in the data directory. git
// never runs in the agent's workspace with svc's rights.
import { closeSync, constants, copyFileSync, fstatSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { git, GitError } from './git.ts';

export interface ChangeSummary {
  commitsAhead: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
}

export interface DeliveryOutcome {
  pushed: boolean;
  error: string | null;
  summary: ChangeSummary | null;
  salvage: { salvageRef: string | null; salvagePath: string | null; notes: string[] } | null;
}

/** Largest bundle svc takes from a sandbox (SVC_BUNDLE_MAX_MIB would be the knob, if ever needed). */
const MAX_BUNDLE_BYTES = 2 * 1024 ** 3;

/** `git diff --numstat` rows: each row a file; a binary file ("-") counts with 0 lines. */
export function summariseNumstat(numstat: string, commitsAhead: number): ChangeSummary {
  const rows = numstat.split('\n').filter(Boolean);
  let insertions = 0;
  let deletions = 0;
  for (const row of rows) {
    const [added, removed] = row.split('\t');
    insertions += added === '-' ? 0 : Number(added);
    deletions += removed === '-' ? 0 : Number(removed);
  }
  return { commitsAhead, filesChanged: rows.length, insertions, deletions };
}

/**
 * Copies the sandbox's bundle to a file of svc's, refusing anything but a plain file of sane size
 * (a symlink to a host secret, a FIFO that would hang svc, a device). Answers why when it refuses.
 */
export function takeBundle(source: string, target: string): string | null {
  let fd: number;
  try {
    fd = openSync(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return `the sandbox left no readable bundle (${(error as NodeJS.ErrnoException).code})`;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return 'the sandbox\'s bundle is not a plain file';
    if (stat.size > MAX_BUNDLE_BYTES) return `the sandbox's bundle is larger than ${MAX_BUNDLE_BYTES} bytes`;
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    const out = openSync(`${target}.partial`, 'w', 0o600);
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (let read; (read = readSync(fd, buffer, 0, buffer.length, null)) > 0; ) writeSync(out, buffer, 0, read);
    } finally {
      closeSync(out);
    }
    renameSync(`${target}.partial`, target);
    return null;
  } finally {
    closeSync(fd);
  }
}

export interface DeliveryRequest {
  /** The project clone: svc's repository, whose origin is the project's forge URL. */
  clone: string;
  runId: string;
  branch: string;
  baseBranch: string;
  /** svc's copy of the sandbox's bundle. */
  bundle: string;
  /** Where a bundle that could not be pushed is kept. */
  salvagePath: string;
  token: string | undefined;
}

function message(error: unknown): string {
  return error instanceof GitError ? error.message : String((error as Error)?.message ?? error);
}

/** Fetch, push, measure; salvage when the push fails. Idempotent: a retry pushes the same tip again. */
export async function deliverBranch(request: DeliveryRequest): Promise<DeliveryOutcome> {
  const { clone: cwd, runId, token } = request;
  const keep = `refs/svc/runs/${runId}`;
  const base = `refs/remotes/origin/${request.baseBranch}`;
  await git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${request.baseBranch}:${base}`], { cwd, token });
  try {
    // fsck: whatever the agent built must be well-formed before svc stores or pushes it.
    await git(['-c', 'fetch.fsckObjects=true', 'fetch', '--quiet', '--no-tags', request.bundle, `+HEAD:${keep}`], { cwd });
  } catch (error) {
    return { pushed: false, error: `the sandbox's bundle could not be taken: ${message(error)}`, summary: null, salvage: null };
  }
  try {
    // --porcelain: git's own verdict goes to stdout, so the error is what the remote said.
    await git(['-c', 'core.hooksPath=/dev/null', 'push', '--porcelain', '--no-verify', 'origin', `${keep}:refs/heads/${request.branch}`], { cwd, token });
  } catch (error) {
    return { pushed: false, error: (error as GitError).stderr?.trim() || message(error), summary: null, salvage: await salvage(request, keep) };
  }
  const commitsAhead = Number(await git(['rev-list', '--count', `${base}..${keep}`], { cwd }));
  const summary = commitsAhead === 0 ? { commitsAhead: 0, filesChanged: 0, insertions: 0, deletions: 0 } : summariseNumstat(await git(['diff', '--numstat', `${base}...${keep}`], { cwd }), commitsAhead);
  return { pushed: true, error: null, summary, salvage: null };
}

async function salvage(request: DeliveryRequest, keep: string): Promise<DeliveryOutcome['salvage']> {
  const notes: string[] = [];
  const rescueRef = `svc/rescue/${request.runId}`;
  let salvageRef: string | null = null;
  try {
    await git(['-c', 'core.hooksPath=/dev/null', 'push', '--quiet', '--no-verify', 'origin', `${keep}:refs/heads/${rescueRef}`], { cwd: request.clone, token: request.token });
    salvageRef = rescueRef;
  } catch (error) {
    notes.push(`rescue push refused: ${message(error)}`);
  }
  let salvagePath: string | null = request.salvagePath;
  try {
    mkdirSync(dirname(salvagePath), { recursive: true, mode: 0o700 });
    copyFileSync(request.bundle, salvagePath);
  } catch (error) {
    notes.push(`bundle not kept: ${message(error)}`);
    salvagePath = null;
  }
  return { salvageRef, salvagePath, notes };
}
