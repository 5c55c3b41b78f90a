// A pull request as svc refers to it, and as the PR loop reads it: shared by the forge's writers
// (github-forge.ts) and its reader of a PR's status (pull-request-status.ts).
import type { PrStatus } from '../../core/pr-loop.ts';

export interface PullRequestRef {
  url: string;
  number: number;
  state: 'open' | 'merged' | 'closed_unmerged';
  mergedAt: string | null;
}

export type PullLike = { html_url: string; number: number; state: string; merged_at: string | null };

export function toRef(pull: PullLike): PullRequestRef {
  return {
    url: pull.html_url,
    number: pull.number,
    state: pull.merged_at ? 'merged' : pull.state === 'open' ? 'open' : 'closed_unmerged',
    mergedAt: pull.merged_at,
  };
}

/** A PR as the loop sees it (core/pr-loop.ts). */
export type PullRequestStatus = PullRequestRef & PrStatus;
