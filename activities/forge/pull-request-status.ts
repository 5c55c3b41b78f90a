// What the PR loop (core/pr-loop.ts) reads about a PR: its head and base, the head's check runs, the
// last review asking for changes, the changed files, and the comments addressed to svc. Only people
// with write access steer svc: a review or a comment by anyone else (or by a bot) is not in the
// answer, since a round's commits may be merged without a person (pr.autoMerge); only the project's
// CI (ciFixer.apps) has its check output in it. Every text is cut (FORGE_TEXT_LIMITS) and masked:
// svc's secrets by value and credential shapes never reach an agent's prompt.
import type { Octokit } from '@octokit/rest';
import { ADDRESSED_TO_SVC, DEFAULT_CI_APPS, FORGE_TEXT_LIMITS } from '../../core/pr-loop.ts';
import { redactKnownSecretsAndCut } from '../../platform/secrets.ts';
import { toRef, type PullLike, type PullRequestStatus } from './pull-request-ref.ts';

/** Check-run conclusions that fail a PR's checks. */
const FAILED = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure']);
/** Repository permissions that may steer svc (GitHub folds maintain into write). */
const WRITERS = new Set(['admin', 'write']);
/** Pages of PR comments read per look (100 each). */
const COMMENT_PAGES = 10;
/**
 * Unanswered commands answered per look, each cut to FORGE_TEXT_LIMITS.command: the answer lands in
 * the run's history.
 */
const COMMANDS_PER_LOOK = 3;
/** How long a user's permission is trusted (a passer-by's spam costs one API call per this, not per look). */
const PERMISSION_TTL_MS = 10 * 60_000;
const permissions = new Map<string, { writer: boolean; at: number }>();

type PullRef = { owner: string; name: string; number: number };

export async function readPullRequestStatus(
  octokit: Octokit,
  ref: PullRef,
  logTailLines: number,
  handledComments: number[] = [],
  ciApps: readonly string[] = DEFAULT_CI_APPS,
): Promise<PullRequestStatus> {
  const repo = { owner: ref.owner, repo: ref.name };
  const { data: pull } = await octokit.rest.pulls.get({ ...repo, pull_number: ref.number });
  const headSha = pull.head.sha;
  const isWriter = writerCheck(octokit, repo);
  const { data: checks } = await octokit.rest.checks.listForRef({ ...repo, ref: headSha, per_page: 100 });
  // Every App's failing check holds the merge; only the project's CI's are answered, with their output.
  const failing = checks.check_runs.filter((run) => FAILED.has(run.conclusion ?? ''));
  const failingCi = failing.filter((run) => ciApps.includes(run.app?.slug ?? ''));
  const checksState =
    checks.check_runs.length === 0
      ? 'none'
      : failing.length
        ? 'failure'
        : checks.check_runs.some((run) => run.status !== 'completed')
          ? 'pending'
          : 'success';
  const { data: reviews } = await octokit.rest.pulls.listReviews({ ...repo, pull_number: ref.number, per_page: 100 });
  let asked: (typeof reviews)[number] | undefined;
  for (const review of reviews.filter((candidate) => candidate.state === 'CHANGES_REQUESTED').reverse()) {
    // A bot's review is an App's (a linter, an AI reviewer): never a person's ask, like its comments.
    if (review.user?.type === 'Bot') continue;
    if (await isWriter(review.user?.login)) {
      asked = review;
      break;
    }
  }
  const reviewComments = asked
    ? (await octokit.rest.pulls.listCommentsForReview({ ...repo, pull_number: ref.number, review_id: asked.id })).data
    : [];
  const { data: files } = await octokit.rest.pulls.listFiles({ ...repo, pull_number: ref.number, per_page: 100 });
  return {
    ...toRef(pull as PullLike),
    headSha,
    baseBranch: pull.base.ref,
    mergeable: pull.mergeable ?? null,
    checks: checksState,
    failingChecks: failingCi.slice(0, FORGE_TEXT_LIMITS.checks).map((run) => ({
      name: forgeText(run.name, FORGE_TEXT_LIMITS.name),
      logTail: forgeText(
        [run.output?.summary, run.output?.text].filter(Boolean).join('\n').split('\n').slice(-logTailLines).join('\n'),
        FORGE_TEXT_LIMITS.checkLog,
        'end',
      ),
    })),
    changesRequested: asked
      ? {
          reviewId: asked.id,
          reviewer: asked.user?.login ?? 'someone',
          body: forgeText(asked.body ?? '', FORGE_TEXT_LIMITS.review),
          comments: reviewComments.slice(0, FORGE_TEXT_LIMITS.reviewComments).map((comment) => ({
            path: forgeText(comment.path, FORGE_TEXT_LIMITS.name),
            body: forgeText(comment.body, FORGE_TEXT_LIMITS.reviewComment),
          })),
        }
      : null,
    changedFiles: files.map((file) => file.filename),
    commands: await commandsToSvc(octokit, repo, ref.number, isWriter, new Set(handledComments)),
  };
}

async function commandsToSvc(
  octokit: Octokit,
  repo: { owner: string; repo: string },
  number: number,
  isWriter: (login: string | undefined) => Promise<boolean>,
  handled: Set<number>,
): Promise<PullRequestStatus['commands']> {
  let pages = 0;
  const comments = await octokit.paginate(
    octokit.rest.issues.listComments,
    { ...repo, issue_number: number, per_page: 100 },
    (response, done) => {
      if ((pages += 1) >= COMMENT_PAGES) done();
      return response.data;
    },
  );
  const commands: PullRequestStatus['commands'] = [];
  for (const comment of comments) {
    if (commands.length >= COMMANDS_PER_LOOK) break;
    const body = comment.body ?? '';
    // A bot's comment is a workflow's (one an agent's push may have started): never a person's ask.
    if (handled.has(comment.id) || comment.user?.type === 'Bot' || !ADDRESSED_TO_SVC.test(body)) continue;
    if (!(await isWriter(comment.user?.login))) continue;
    commands.push({
      commentId: comment.id,
      author: comment.user!.login,
      body: forgeText(body, FORGE_TEXT_LIMITS.command),
    });
  }
  return commands;
}

/**
 * Forge text as a prompt may take it: cut to `max` characters (a log keeps its end) with a marker
 * saying so, then svc's known secrets and every credential shape masked.
 */
function forgeText(text: string, max: number, keep: 'start' | 'end' = 'start'): string {
  const masked = redactKnownSecretsAndCut(text, max, keep);
  if (!masked.cut) return masked.text;
  return keep === 'end' ? `[… cut]\n${masked.text}` : `${masked.text}\n[… cut]`;
}

/** Whether a user may write to the repository: asked once per user per look, remembered a while. */
function writerCheck(octokit: Octokit, repo: { owner: string; repo: string }) {
  const known = new Map<string, Promise<boolean>>();
  return (login: string | undefined): Promise<boolean> => {
    if (!login) return Promise.resolve(false);
    const key = `${repo.owner}/${repo.repo}/${login}`;
    const remembered = permissions.get(key);
    if (remembered && Date.now() - remembered.at < PERMISSION_TTL_MS) return Promise.resolve(remembered.writer);
    let answer = known.get(login);
    if (!answer) {
      answer = octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login }).then(
        ({ data }) => remember(key, WRITERS.has(data.permission)),
        (error: { status?: number }) => {
          // Not a collaborator. A 403 (a rate limit, say) is not an answer: the look fails and is
          // retried, rather than a writer's ask being missed while the PR merges.
          if (error.status === 404) return remember(key, false);
          throw error;
        },
      );
      known.set(login, answer);
    }
    return answer;
  };
}

function remember(key: string, writer: boolean): boolean {
  if (permissions.size > 10_000) permissions.clear();
  permissions.set(key, { writer, at: Date.now() });
  return writer;
}
