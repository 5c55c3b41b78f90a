// A diff document from two commits of a scratch repository: the file list (name-status and numstat,
// NUL-separated, so no path is ever parsed from quoted text) and each file's patch, cut to the
// limits of core/run-diff.ts while git's output streams (nothing larger is ever held).
import { DIFF_LIMITS, type DiffFile, type DiffFileStatus } from '../../core/run-diff.ts';
import { diffGit } from './diff-git.ts';

const DIFF_FLAGS = ['--no-ext-diff', '--no-textconv', '--no-color', '-M', '--diff-filter=AMDR'];
/** git's output the file list may take: well past maxFiles rows of long paths. */
const LIST_CAP = 8 << 20;
/** git's patch output svc reads at most; past it the rest is listed without patches. */
const PATCH_STREAM_CAP = 64 << 20;

const STATUS: Record<string, DiffFileStatus> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed' };

function jsonBytes(value: string): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** `--name-status -z` and `--numstat -z` records, in the same order, joined into files. */
export function parseFileList(nameStatus: string, numstat: string, maxFiles: number): DiffFile[] {
  const names = nameStatus.split('\0');
  const numbers = numstat.split('\0');
  const files: DiffFile[] = [];
  let n = 0;
  let s = 0;
  while (files.length < maxFiles && n < names.length - 1) {
    const code = names[n++]!;
    const status = STATUS[code[0]!];
    const first = names[n++];
    const renamed = status === 'renamed';
    const second = renamed ? names[n++] : undefined;
    const counts = numbers[s++];
    if (!status || first === undefined || (renamed && second === undefined) || counts === undefined) break;
    // numstat -z: "added\tdeleted\tpath" or, for a rename, "added\tdeleted\t" then old, new.
    if (renamed) s += 2;
    const [added, removed] = counts.split('\t');
    const binary = added === '-';
    files.push({
      path: renamed ? second! : first,
      status,
      ...(renamed ? { oldPath: first } : {}),
      additions: binary ? 0 : Number(added),
      deletions: binary ? 0 : Number(removed),
      binary,
    });
  }
  return files;
}

/** Splits git's patch stream into per-file patches as it arrives, keeping each only while it is small. */
class PatchCollector {
  readonly patches: (string | null)[] = [];
  #current: Buffer[] = [];
  #size = 0;
  #dropped = false;
  #pending = '';

  push(chunk: Buffer): void {
    const text = this.#pending + chunk.toString('latin1');
    const lines = text.split('\n');
    this.#pending = lines.pop()!;
    for (const line of lines) this.#line(line);
    // A line with no end in sight is still bounded: it counts against the file's patch now.
    if (this.#pending.length > DIFF_LIMITS.maxFilePatchBytes) {
      this.#add(this.#pending);
      this.#pending = '';
    }
  }

  end(): void {
    if (this.#pending) this.#line(this.#pending);
    this.#close();
  }

  #line(line: string): void {
    if (line.startsWith('diff --git ')) {
      this.#close();
      this.patches.push(null);
      this.#current = [];
      this.#size = 0;
      this.#dropped = false;
      return;
    }
    if (this.patches.length === 0) return;
    // The header before the first hunk repeats what the file list says (and the paths, quoted).
    if (this.#size === 0 && !line.startsWith('@@')) return;
    this.#add(`${line}\n`);
  }

  #add(text: string): void {
    if (this.#dropped) return;
    this.#size += text.length;
    if (this.#size > DIFF_LIMITS.maxFilePatchBytes) {
      this.#dropped = true;
      this.#current = [];
      return;
    }
    this.#current.push(Buffer.from(text, 'latin1'));
  }

  #close(): void {
    if (this.patches.length === 0) return;
    this.patches[this.patches.length - 1] = this.#dropped ? null : Buffer.concat(this.#current).toString('utf8');
  }
}

/** The files changed from `base` to `head` in `gitDir`, with their patches, and whether limits cut any. */
export async function diffDocument(
  gitDir: string,
  base: string,
  head: string,
): Promise<{ files: DiffFile[]; truncated: boolean }> {
  const range = [base, head, '--'];
  const [names, counts] = await Promise.all([
    diffGit(gitDir, ['diff', ...DIFF_FLAGS, '-z', '--name-status', ...range], { cap: LIST_CAP }),
    diffGit(gitDir, ['diff', ...DIFF_FLAGS, '-z', '--numstat', ...range], { cap: LIST_CAP }),
  ]);
  const files = parseFileList(names.stdout.toString('utf8'), counts.stdout.toString('utf8'), DIFF_LIMITS.maxFiles);
  let truncated = names.cut || counts.cut || files.length === DIFF_LIMITS.maxFiles;
  const collector = new PatchCollector();
  let streamed = 0;
  const patch = await diffGit(gitDir, ['diff', ...DIFF_FLAGS, '--patch', '--unified=3', ...range], {
    onChunk: (chunk) => {
      streamed += chunk.length;
      collector.push(chunk);
      // Past the files listed, or past what svc reads, the rest has no patch.
      return streamed <= PATCH_STREAM_CAP && collector.patches.length <= files.length;
    },
    timeoutMs: 120_000,
  });
  collector.end();
  if (patch.cut && collector.patches.length <= files.length) truncated = true;
  let total = 0;
  files.forEach((file, index) => {
    total += jsonBytes(file.path) + (file.oldPath ? jsonBytes(file.oldPath) : 0);
    const text = collector.patches[index];
    if (file.binary) return;
    // The last patch read may be incomplete when git was stopped: not shown.
    const complete = text !== undefined && text !== null && (!patch.cut || index < collector.patches.length - 1);
    if (!complete || total + jsonBytes(text) > DIFF_LIMITS.maxTotalBytes) {
      if (text !== '') truncated = true;
      return;
    }
    total += jsonBytes(text);
    file.patch = text;
  });
  return { files, truncated };
}
