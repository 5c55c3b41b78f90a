// Real payload shapes of every run event kind (as the code that writes each one builds it), for
// the renderings' tests.
import type { RUN_EVENT_KINDS } from '../../core/event-kinds.ts';

type SvcKind = (typeof RUN_EVENT_KINDS)[number];

const run = 'run_01JCZ8Q3V4Y6';
const prUrl = 'https://github.com/acme/app/pull/12';

/** One sample per kind (a Record: a kind added without a sample fails the type-check). */
export const SAMPLES: Record<SvcKind, { stream: 'stdout' | 'stderr' | 'system'; payload: unknown }> = {
  'log.stdout': { stream: 'stdout', payload: { text: '\u001b[32mok\u001b[0m 12 tests passed' } },
  'log.stderr': { stream: 'stderr', payload: { text: 'npm WARN deprecated glob@7.2.3' } },
  state_change: {
    stream: 'system',
    payload: { type: 'result', state: 'failed', failureReason: 'timed_out', exitCode: 137, signal: null },
  },
  assistant: { stream: 'stdout', payload: { text: 'I will fix the failing test first.\nThen run it.' } },
  tool_use: { stream: 'stdout', payload: { name: 'Bash', input: { command: 'npm test', description: 'Run tests' } } },
  tool_result: {
    stream: 'stdout',
    payload: {
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '12 passing\n0 failing', is_error: false }],
    },
  },
  usage: {
    stream: 'stdout',
    payload: {
      costUsd: 0.4213,
      tokensInput: 12034,
      tokensOutput: 2210,
      tokensCacheRead: 50000,
      tokensCacheWrite: null,
    },
  },
  'sandbox.started': {
    stream: 'system',
    payload: {
      isolation: 'bubblewrap',
      egress: ['api.anthropic.com:443', 'registry.npmjs.org:443'],
      toolchain: ['/usr/bin'],
      sandboxId: 'sbx_1',
      sandboxRunId: run,
      workspacePath: `/data/workspaces/${run}`,
      memory: { limitMiB: 2048, enforced: true },
      workspace: 'clone',
    },
  },
  'sandbox.oom_kill': { stream: 'system', payload: { agentExitCode: 137, agentSignal: null } },
  'sandbox.egress_refused': {
    stream: 'system',
    payload: {
      ts: '2026-12-02T01:00:00.000Z',
      protocol: 'connect',
      destination: 'evil.example:443',
      reason: 'not_allowed',
    },
  },
  'output.truncated': { stream: 'system', payload: { limitBytes: 67108864, keptBytes: 67108800 } },
  'environment.building': {
    stream: 'system',
    payload: { key: '3f9a0c12d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1' },
  },
  'environment.log': { stream: 'system', payload: { stream: 'stdout', text: 'added 312 packages in 41s' } },
  'environment.ready': {
    stream: 'system',
    payload: {
      key: '3f9a0c12d4e5',
      cached: false,
      durationMs: 41230,
      uncached: "the base is not on the project's default branch",
    },
  },

  'environment.service_ready': { stream: 'system', payload: { name: 'db', durationMs: 1830 } },
  'admission.waiting': { stream: 'system', payload: { reason: 'project limit (2 running)' } },
  'admission.granted': { stream: 'system', payload: {} },
  'steer.sent': { stream: 'system', payload: { messageId: 'msg_1', priority: 'high', fromActor: 'alice' } },
  'steer.delivered': { stream: 'system', payload: { messageId: 'msg_1' } },
  'cancel.requested': { stream: 'system', payload: { reason: 'wrong branch', requestedBy: 'operator' } },
  'cost.cap_exceeded': { stream: 'system', payload: { costUsd: 1.2345, maxCostUsd: 1 } },
  'workspace.too_large': { stream: 'system', payload: { sizeMiB: 10241, maxMiB: 10240 } },
  'run.paused': {
    stream: 'system',
    payload: { reason: 'cost_cap', costUsd: 1.2, maxCostUsd: 1, generation: 1, workspacePath: '/data/w' },
  },
  'run.resumed': { stream: 'system', payload: { maxCostUsd: 5, spentUsd: 1.2, generation: 2 } },
  'duration.exceeded': { stream: 'system', payload: { maxDurationMinutes: 30, limitMinutes: 30 } },
  'watchdog.silence_exceeded': { stream: 'system', payload: { silenceTimeoutMs: 600_000 } },
  'finalize.intent_parked': {
    stream: 'system',
    payload: { attemptId: 'a1', branch: `svc/${run}`, baseBranch: 'main' },
  },
  'finalize.result': {
    stream: 'system',
    payload: {
      pushed: false,
      commitsAhead: 1,
      dirty: true,
      dirtyPaths: ['a.ts', 'b.ts'],
      stages: [],
      unposted: null,
      durationMs: 812,
    },
  },
  'reap.empty_push': { stream: 'system', payload: { dirtyPaths: [], droppedCommit: false, noChanges: true } },
  branch_pushed: { stream: 'system', payload: { branch: `svc/${run}`, commitsAhead: 1 } },
  'reap.pr_opened': { stream: 'system', payload: { prUrl, branch: `svc/${run}`, baseBranch: 'main' } },
  'reap.pr_open_failed': { stream: 'system', payload: { message: 'Validation Failed: a pull request already exists' } },
  'reap.pr_open_skipped': { stream: 'system', payload: { reason: 'no forge credentials for this repository' } },
  'reap.workspace_salvaged': {
    stream: 'system',
    payload: { salvageRef: `refs/svc/salvage/${run}`, salvagePath: null, notes: ['push refused'] },
  },
  'reap.workspace_salvage_failed': {
    stream: 'system',
    payload: { salvageRef: null, salvagePath: null, notes: ['nothing was handed over', 'bundle missing'] },
  },
  'reap.workspace_salvage_recorded': {
    stream: 'system',
    payload: {
      source: 'pod',
      trigger: 'terminating',
      salvageRef: null,
      salvagePath: '/data/salvage/x.bundle',
      notes: [],
    },
  },
  'pr.follow_started': { stream: 'system', payload: { workflowId: 'run_abc-pr' } },
  'pr.state_changed': {
    stream: 'system',
    payload: { prUrl, prState: 'merged', prMergedAt: '2026-12-02T01:00:00.000Z' },
  },
  'pr_loop.follow_up_started': { stream: 'system', payload: { round: 2, kind: 'ci_fix', runId: 'run_child' } },
  'pr_loop.follow_up_ended': {
    stream: 'system',
    payload: {
      round: 2,
      kind: 'ci_fix',
      runId: 'run_child',
      state: 'failed',
      failureReason: 'agent_error',
      prCostUsd: 1.5,
    },
  },
  'pr_loop.merge_requested': { stream: 'system', payload: { sha: '0123456789abcdef0123', method: 'squash' } },
  'pr_loop.merge_refused': {
    stream: 'system',
    payload: { sha: '0123456789abcdef0123', method: 'squash', reason: 'Head branch was modified' },
  },
  'pr_loop.commented': {
    stream: 'system',
    payload: { key: 'limit', body: 'svc stops here:\nround limit reached', posted: true },
  },
  'pr_loop.stopped': { stream: 'system', payload: {} },
  'preview.starting': { stream: 'system', payload: { port: 3000, command: 'npm run dev' } },
  'preview.made_room': { stream: 'system', payload: { evicted: ['run_a', 'run_b'] } },
  'preview.live': { stream: 'system', payload: { port: 41234 } },
  'preview.failed': { stream: 'system', payload: { message: 'the preview did not become ready', port: null } },
  'preview.torn_down': { stream: 'system', payload: { reason: 'max_lifetime', actor: null, port: 41234 } },
  'run.internal_failure': {
    stream: 'system',
    payload: { phase: 'finalize', message: 'git push failed', activity: 'deliverBranch', type: 'GitError' },
  },
  'run.reconciled': { stream: 'system', payload: { state: 'failed', failureReason: 'internal_error' } },
  'plan_run.dispatched': {
    stream: 'system',
    payload: { seq: 2, seedId: 'seed-login', runId: run, executionProjectId: 'proj_1' },
  },
  'plan_run.advanced': { stream: 'system', payload: { mergedChildSeq: 1, dispatchedChildSeq: 2 } },
  'plan_run.waiting_for_merge': { stream: 'system', payload: { seq: 2, prUrl } },
  'plan_run.merged': { stream: 'system', payload: { mergedChildSeq: 2, prUrl, mergedAt: '2026-12-02T01:00:00.000Z' } },
  'plan_run.skipped': { stream: 'system', payload: { seq: 3, seedId: 'seed-old' } },
  'plan_run.child_retried': {
    stream: 'system',
    payload: { previousRunId: 'run_prev', failureReason: 'provider_error', retryCount: 1 },
  },
  'plan_run.failed': { stream: 'system', payload: { failedSeq: 2, reason: 'pr_closed_without_merge', prUrl } },
  'plan_run.succeeded': { stream: 'system', payload: { children: 3 } },
  'plan_run.cancelled': { stream: 'system', payload: { reason: null, requestedBy: 'operator' } },
  'plan_run.cancel_child_failed': { stream: 'system', payload: { seq: 2, runId: run, message: 'workflow not found' } },
  'plan_run.resumed': { stream: 'system', payload: { reason: 'child_pr_merge_timeout', note: 'merged by hand' } },
  'plan_run.internal_failure': {
    stream: 'system',
    payload: { message: 'activity timed out', activity: 'describeRun' },
  },
};
