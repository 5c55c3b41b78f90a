// Finalization, the in-sandbox half: the workflow parks an intent, the sandbox fetches it, does
// the workspace work (push, count, probe dirtiness) and posts a result. The same wire serves the
// local backend and a Kubernetes pod. Pure: types and the verdict a result implies. Workflows import
// it, so it imports no library: every module a workflow imports is evaluated again for each workflow
// (docs/decisions/0023-toolchain.md); the schemas live in finalize-schema.ts.
import type { FinalizeResultWire } from './finalize-schema.ts';
import type { RunFailureReason, RunState } from './run-states.ts';

export interface FinalizeIntent {
  version: 1;
  attemptId: string;
  /** The branch to push HEAD to. */
  branch: string;
  push: boolean;
  artifacts: string[];
  commit: 'seeds'[];
  baseBranch: string;
  /**
   * `bundle`: the sandbox pushes nothing; it leaves its commits as a git bundle in its outbox and
   * svc pushes them from a repository of its own. No intent ever carries a credential.
   */
  handoff?: 'bundle';
}

export { BUNDLE_FILE, FINALIZE_STAGES } from './finalize-stages.ts';

/** What a sandbox posts (its shape is checked by the API: core/finalize-schema.ts). */
export type FinalizeResult = FinalizeResultWire & {
  unposted?: 'timeout' | 'pod_terminal' | 'pod_gone';
};

/** What svc makes up when the sandbox never posted a result. */
export function unpostedResult(why: 'timeout' | 'pod_terminal' | 'pod_gone'): FinalizeResult {
  return {
    pushed: false,
    commitsAhead: null,
    emptyPush: false,
    dirty: false,
    events: [],
    artifacts: {},
    prBranch: null,
    stages: [],
    unposted: why,
  };
}

/** What svc's own push of a handed-over bundle did (activities: deliverBranch). */
export interface BranchDelivery {
  pushed: boolean;
  /** git's message when the bundle could not be taken or the push failed. */
  error: string | null;
}

/** The sandbox's result with svc's push folded in, as if the sandbox had pushed: one verdict for both. */
export function withDelivery(result: FinalizeResult, delivery: BranchDelivery, branch: string): FinalizeResult {
  const push = delivery.pushed
    ? { stage: 'branch_push' as const, status: 'ok' as const }
    : {
        stage: 'branch_push' as const,
        status: 'failed' as const,
        error: (delivery.error ?? 'push failed').slice(-4000),
      };
  return {
    ...result,
    pushed: delivery.pushed,
    prBranch: delivery.pushed ? branch : null,
    stages: [...result.stages.filter((stage) => stage.stage !== 'branch_push'), push],
  };
}

const POLICY_REFUSAL = /protected branch|pre-receive hook declined|GH006|GH013|push protection|push declined due to/i;

export interface FinalizeVerdict {
  state: RunState;
  failureReason: RunFailureReason | null;
  /** Succeeded without any commit: nothing to push, no PR. */
  noChanges: boolean;
  /** The branch holds the run's commits on the remote. */
  pushedBranch: string | null;
  pushError: string | null;
}

/**
 * The reap order of the reference system for a result: dropped work first, then no-op dispatches
 * onto existing refs, then the finalize failures.
 */
export function finalizeVerdict(result: FinalizeResult, onExistingRef: boolean): FinalizeVerdict {
  const push = result.stages.find((stage) => stage.stage === 'branch_push');
  const base = {
    noChanges: false,
    pushedBranch: null,
    pushError: push?.status === 'failed' ? (push.error ?? 'push failed') : null,
  };
  if (result.unposted) return { ...base, state: 'failed', failureReason: 'finalize_unposted' };
  if (result.commitsAhead === 0) {
    if (result.dirty) return { ...base, state: 'failed', failureReason: 'dropped_commit' };
    if (onExistingRef) return { ...base, state: 'failed', failureReason: 'no_changes' };
    return { ...base, state: 'succeeded', failureReason: null, noChanges: true };
  }
  if (push?.status === 'failed')
    return {
      ...base,
      state: 'failed',
      failureReason: POLICY_REFUSAL.test(base.pushError ?? '') ? 'push_rejected_policy' : 'finalize_failed',
    };
  if (!result.pushed || result.commitsAhead === null)
    return { ...base, state: 'failed', failureReason: 'finalize_failed' };
  return { ...base, state: 'succeeded', failureReason: null, pushedBranch: result.prBranch };
}
