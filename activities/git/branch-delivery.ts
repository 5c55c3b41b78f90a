// svc's side of the hand-over: the commits a sandbox left as a git bundle are fetched into a
// scratch repository of svc's own (its config, no hooks of the agent's; the project clone's
// objects borrowed, never added to), pushed to the run's branch with svc's credential, and
// measured there. When the push fails, the work is salvaged from the same place: a rescue branch
// on origin and the bundle kept in the data directory. git never runs in the agent's workspace
// with svc's rights.
import { constants } from 'node:fs';
import { mkdir, open, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { git, GitError, type ForgeRemote } from '../../platform/host-git.ts';
import { keepSalvageBundle } from '../../platform/salvage-store.ts';

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
 * (a symlink to a host secret, a FIFO that would hang svc, a device, a file still growing past the
 * cap). Asynchronous: a big bundle does not stall the worker's other activities. Answers why when
 * it refuses.
 */
export async function takeBundle(source: string, target: string): Promise<string | null> {
  let input: FileHandle;
  try {
    input = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return `the sandbox left no readable bundle (${(error as NodeJS.ErrnoException).code})`;
  }
  try {
    const stat = await input.stat();
    if (!stat.isFile()) return "the sandbox's bundle is not a plain file";
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const output = await open(`${target}.partial`, 'w', 0o600);
    let copied = 0;
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (let read; (read = (await input.read(buffer, 0, buffer.length, null)).bytesRead) > 0;) {
        copied += read;
        // Counted while copying: the file may grow after the stat.
        if (copied > MAX_BUNDLE_BYTES) break;
        await output.write(buffer, 0, read);
      }
    } finally {
      await output.close();
    }
    if (copied > MAX_BUNDLE_BYTES) {
      await rm(`${target}.partial`, { force: true });
      return `the sandbox's bundle is larger than ${MAX_BUNDLE_BYTES} bytes`;
    }
    await rename(`${target}.partial`, target);
    return null;
  } finally {
    await input.close();
  }
}

export interface DeliveryRequest {
  /** The project clone: svc's repository, whose origin is the project's forge URL. */
  clone: string;
  /** A scratch bare repository svc makes for this delivery (and removes after). */
  scratch: string;
  runId: string;
  branch: string;
  baseBranch: string;
  /** svc's copy of the sandbox's bundle. */
  bundle: string;
  /** svc's data directory: a bundle that could not be pushed is kept in its salvage store. */
  dataDir: string;
  /** Where the project's forge is, and svc's token for it. */
  remote: ForgeRemote;
}

function message(error: unknown): string {
  return error instanceof GitError ? error.message : String((error as Error)?.message ?? error);
}

/** The run's commits, fetched from its bundle into the scratch repository. */
const RUN_REF = 'refs/svc/run';

/**
 * Fetch, push, measure; salvage when the push fails. Idempotent: a retry pushes the same tip
 * again. The agent's objects go into a scratch repository that borrows the clone's objects
 * (alternates) and is removed afterwards, never into the project clone, whose objects every later
 * workspace is cut from: one run's work (or a secret the forge refused) never reaches another run.
 */
export async function deliverBranch(request: DeliveryRequest): Promise<DeliveryOutcome> {
  const { clone, scratch, remote } = request;
  const base = `refs/remotes/origin/${request.baseBranch}`;
  await git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${request.baseBranch}:${base}`], {
    cwd: clone,
    remote,
  });
  const baseCommit = await git(['rev-parse', '--verify', `${base}^{commit}`], { cwd: clone });
  const origin = await git(['remote', 'get-url', 'origin'], { cwd: clone });
  const objects = resolve(clone, await git(['rev-parse', '--git-path', 'objects'], { cwd: clone }));
  await rm(scratch, { recursive: true, force: true });
  await git(['init', '--quiet', '--bare', scratch]);
  await writeFile(join(scratch, 'objects', 'info', 'alternates'), `${objects}\n`);
  try {
    try {
      // fsck: whatever the agent built must be well-formed before svc pushes it.
      await git(['-c', 'fetch.fsckObjects=true', 'fetch', '--quiet', '--no-tags', request.bundle, `+HEAD:${RUN_REF}`], {
        cwd: scratch,
      });
    } catch (error) {
      return {
        pushed: false,
        error: `the sandbox's bundle could not be taken: ${message(error)}`,
        summary: null,
        salvage: null,
      };
    }
    const push = (target: string) =>
      git(['push', '--porcelain', '--no-verify', origin, `${RUN_REF}:refs/heads/${target}`], { cwd: scratch, remote });
    try {
      // --porcelain: git's own verdict goes to stdout, so the error is what the remote said.
      await push(request.branch);
    } catch (error) {
      return {
        pushed: false,
        error: (error as GitError).stderr?.trim() || message(error),
        summary: null,
        salvage: await salvage(request, push),
      };
    }
    const commitsAhead = Number(await git(['rev-list', '--count', `${baseCommit}..${RUN_REF}`], { cwd: scratch }));
    const summary =
      commitsAhead === 0
        ? { commitsAhead: 0, filesChanged: 0, insertions: 0, deletions: 0 }
        : summariseNumstat(
            await git(['diff', '--numstat', `${baseCommit}...${RUN_REF}`], { cwd: scratch }),
            commitsAhead,
          );
    return { pushed: true, error: null, summary, salvage: null };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function salvage(
  request: DeliveryRequest,
  push: (target: string) => Promise<string>,
): Promise<DeliveryOutcome['salvage']> {
  const notes: string[] = [];
  const rescueRef = `svc/rescue/${request.runId}`;
  let salvageRef: string | null = null;
  try {
    await push(rescueRef);
    salvageRef = rescueRef;
  } catch (error) {
    notes.push(`rescue push refused: ${message(error)}`);
  }
  let salvagePath: string | null = null;
  try {
    salvagePath = keepSalvageBundle(request.dataDir, request.runId, request.bundle, 'copy');
  } catch (error) {
    notes.push(`bundle not kept: ${message(error)}`);
    salvagePath = null;
  }
  return { salvageRef, salvagePath, notes };
}
