// The finalize wire's fixed names, shared by its types (finalize.ts) and its schemas
// (finalize-schema.ts), which both import them: a module of their own keeps the two apart.

/** The bundle's file name in the sandbox's outbox. */
export const BUNDLE_FILE = 'branch.bundle';

export const FINALIZE_STAGES = [
  'mulch_merge',
  'seeds_mirror',
  'plans_mirror',
  'seeds_commit',
  'branch_bundle',
  'branch_push',
  'commits_ahead',
] as const;
