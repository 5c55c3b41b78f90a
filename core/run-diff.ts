// A run's change as GET /runs/{id}/diff answers it, declared once: the API validates and documents
// it from this schema, the worker's diff activity builds it, the dashboard and the CLI read it.
import { z } from 'zod';

/**
 * The bounds of one diff document. It travels through Temporal (an activity's result, a workflow's
 * result: each a history payload, 2 MiB at most by default), so its size is bounded as JSON.
 */
export const DIFF_LIMITS = {
  /** Files listed; a change touching more lists the first ones and says `truncated`. */
  maxFiles: 1000,
  /** One file's patch, as JSON text; a bigger one is left out (`patch` absent, `truncated`). */
  maxFilePatchBytes: 128 * 1024,
  /** Every patch and path together, as JSON text; files past it are listed without a patch. */
  maxTotalBytes: 1024 * 1024,
  /** A blob larger than this is not diffed (git's core.bigFileThreshold): shown as binary. */
  bigFileBytes: 1024 * 1024,
} as const;

export const DIFF_FILE_STATUSES = ['added', 'modified', 'deleted', 'renamed'] as const;
export type DiffFileStatus = (typeof DIFF_FILE_STATUSES)[number];

export const diffFileSchema = z.object({
  path: z.string(),
  status: z.enum(DIFF_FILE_STATUSES),
  oldPath: z.string().optional().describe('A renamed file: where it was'),
  additions: z.number().int(),
  deletions: z.number().int(),
  binary: z.boolean().describe('A binary file (or one larger than the diff limit): listed without a patch'),
  patch: z
    .string()
    .optional()
    .describe("The file's unified diff (its hunks, from the first @@); absent for a binary or oversized file"),
});
export type DiffFile = z.infer<typeof diffFileSchema>;

export const runDiffSchema = z.object({
  baseCommit: z.string().describe("Where the run's branch forked from its base branch (the merge base)"),
  headCommit: z.string().describe("The branch's tip: the workspace's commit while running, else the pushed one"),
  source: z
    .enum(['workspace', 'branch', 'salvage'])
    .describe("Where the commits were read: the running workspace, the pushed branch, or the run's salvage"),
  files: z.array(diffFileSchema),
  truncated: z.boolean().describe('Some files or patches were left out by the limits (docs/api.md)'),
});
export type RunDiff = z.infer<typeof runDiffSchema>;

/** What the worker is asked: the run, its branches (from its workflow's input) and where to look. */
export interface RunDiffRequest {
  runId: string;
  projectId: string;
  /** The run's branch and its base: null when its workflow's input is no longer kept. */
  branch: string | null;
  baseBranch: string | null;
  /** A running run: its workspace's current commits. */
  live: boolean;
  salvageRef: string | null;
}

/** The worker's answer: the document, or why there is none (the API's 409). */
export type RunDiffAnswer = { kind: 'diff'; diff: RunDiff } | { kind: 'none'; reason: string };
