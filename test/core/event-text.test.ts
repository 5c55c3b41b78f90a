// One human line per run event (core/event-text.ts): every kind svc writes, with the payload its
// writer builds; agents' own lines; anything unknown or malformed.
import test from 'ava';
import { RUN_EVENT_KINDS } from '../../core/event-kinds.ts';
import { describeRunEvent, type EventTone } from '../../core/event-text.ts';
import { SAMPLES } from './event-text-samples.ts';

const run = 'run_01JCZ8Q3V4Y6';

const EXPECTED: Record<keyof typeof SAMPLES, [EventTone, string]> = {
  'log.stdout': ['output', '\u001b[32mok\u001b[0m 12 tests passed'],
  'log.stderr': ['output', 'npm WARN deprecated glob@7.2.3'],
  state_change: ['error', 'Run failed (timed out, exit 137)'],
  assistant: ['output', 'I will fix the failing test first.\nThen run it.'],
  tool_use: ['info', 'Tool Bash: npm test'],
  tool_result: ['info', 'Tool result: 12 passing 0 failing'],
  usage: ['info', 'Usage ($0.42, 12,034 tokens in, 2,210 out, 50,000 cached)'],
  'sandbox.started': ['info', 'Sandbox started (bubblewrap, 2 egress rules, 2048 MiB)'],
  'sandbox.oom_kill': ['error', 'Out of memory: the kernel killed a process of the run (agent exit 137)'],
  'sandbox.egress_refused': ['warn', 'Egress refused: evil.example:443 (connect, not allowed)'],
  'output.truncated': ['warn', "Output truncated: the run's output reached its cap (64 MiB); later lines are not kept"],
  'environment.building': ['info', 'Setting up the environment (3f9a0c12d4e5)'],
  'environment.log': ['output', 'added 312 packages in 41s'],
  'environment.ready': [
    'info',
    "Environment ready (set up, 41.2 s, not cached: the base is not on the project's default branch)",
  ],
  'environment.service_ready': ['info', 'Service db ready (1.8 s)'],
  'admission.waiting': ['info', 'Waiting for a slot: project limit (2 running)'],
  'admission.granted': ['info', 'Slot granted'],
  'steer.sent': ['info', 'Steering message queued (high priority, from alice)'],
  'steer.delivered': ['info', 'Steering message delivered'],
  'cancel.requested': ['warn', 'Cancel requested by operator: wrong branch'],
  'cost.cap_exceeded': ['error', 'Cost cap exceeded ($1.23 of $1.00): agent stopped'],
  'workspace.too_large': ['error', 'Workspace too large (10241 MiB or more of 10240 MiB): agent stopped'],
  'run.paused': ['warn', 'Paused at the cost cap ($1.20 of $1.00): raise the cap or cancel'],
  'run.resumed': ['info', 'Resumed with a cap of $5.00 (generation 2)'],
  'duration.exceeded': ['error', 'Stopped: past its time limit (30 minutes)'],
  'watchdog.silence_exceeded': ['error', 'Stopped: silent too long (10 minutes)'],
  'finalize.intent_parked': ['info', `Finalizing: asked the sandbox to hand over svc/${run} (onto main)`],
  'finalize.result': ['info', 'Finalize result (1 commit ahead, 2 uncommitted paths)'],
  'reap.empty_push': ['info', 'Nothing to push (no changes)'],
  branch_pushed: ['info', `Pushed svc/${run} (1 commit)`],
  'reap.pr_opened': ['info', 'PR #12 opened (onto main)'],
  'reap.pr_open_failed': ['error', 'PR not opened: Validation Failed: a pull request already exists'],
  'reap.pr_open_skipped': ['warn', 'PR not opened: no forge credentials for this repository'],
  'reap.workspace_salvaged': ['warn', `Workspace salvaged: refs/svc/salvage/${run}`],
  'reap.workspace_salvage_failed': ['error', 'Workspace salvage failed: nothing was handed over; bundle missing'],
  'reap.workspace_salvage_recorded': ['warn', 'Workspace salvage recorded (pod, terminating): /data/salvage/x.bundle'],
  'pr.follow_started': ['info', 'The PR is followed by workflow run_abc-pr'],
  'pr.state_changed': ['info', 'PR #12 merged'],
  'pr_loop.follow_up_started': ['info', 'PR loop round 2 (ci fix) started: run_child'],
  'pr_loop.follow_up_ended': ['warn', 'PR loop round 2 (ci fix) failed (agent error, PR total $1.50)'],
  'pr_loop.merge_requested': ['info', 'Merged the PR (0123456789ab, squash)'],
  'pr_loop.merge_refused': ['warn', 'Merge refused (0123456789ab): Head branch was modified'],
  'pr_loop.commented': ['info', 'Commented on the PR: svc stops here: round limit reached'],
  'pr_loop.stopped': ['warn', 'PR loop stopped by an operator: the PR is followed, no longer answered'],
  'preview.starting': ['info', 'Preview starting (port 3000, npm run dev)'],
  'preview.made_room': ['info', 'Made room for the preview: tore down 2 previews (run_a, run_b)'],
  'preview.live': ['info', 'Preview live (port 41234)'],
  'preview.failed': ['error', 'Preview failed: the preview did not become ready'],
  'preview.torn_down': ['info', 'Preview torn down (max lifetime)'],
  'run.internal_failure': ['error', 'Internal failure (phase finalize, deliverBranch): git push failed'],
  'run.reconciled': ['warn', 'Reconciled from its closed workflow: failed (internal error)'],
  'plan_run.dispatched': ['info', `Plan step 2 dispatched (seed seed-login): ${run}`],
  'plan_run.advanced': ['info', 'Plan advanced past step 1 to step 2'],
  'plan_run.waiting_for_merge': ['info', 'Plan step 2 waits for PR #12 to merge'],
  'plan_run.merged': ['info', 'Plan step 2: PR #12 merged'],
  'plan_run.skipped': ['info', 'Plan step 3 skipped (seed seed-old is closed)'],
  'plan_run.child_retried': ['warn', 'Plan step retried after provider error (was run_prev, retry 1)'],
  'plan_run.failed': ['error', 'Plan-run failed at step 2: pr closed without merge'],
  'plan_run.succeeded': ['info', 'Plan-run succeeded (3 steps)'],
  'plan_run.cancelled': ['warn', 'Plan-run cancelled by operator'],
  'plan_run.cancel_child_failed': ['error', `Could not cancel plan step 2 (${run}): workflow not found`],
  'plan_run.resumed': ['info', 'Plan-run resumed (after child pr merge timeout): merged by hand'],
  'plan_run.internal_failure': ['error', 'Plan-run internal failure: activity timed out'],
};

test('every kind svc writes reads as its own human line', (t) => {
  for (const kind of RUN_EVENT_KINDS) {
    const [tone, text] = EXPECTED[kind];
    t.deepEqual(describeRunEvent({ kind, ...SAMPLES[kind] }), { tone, text }, kind);
  }
  const texts = RUN_EVENT_KINDS.filter((kind) => EXPECTED[kind][0] !== 'output').map((kind) => EXPECTED[kind][1]);
  t.is(new Set(texts).size, texts.length, 'no two kinds read alike');
  for (const text of texts) t.false(text.includes('{'), `no raw JSON: ${text}`);
});

test('the run state envelope: queued, running, ended; a runtime turn result', (t) => {
  const line = (payload: unknown) => describeRunEvent({ kind: 'state_change', stream: 'system', payload });
  t.deepEqual(line({ state: 'queued' }), { tone: 'info', text: 'Run queued' });
  t.deepEqual(line({ state: 'running' }), { tone: 'info', text: 'Agent running' });
  t.deepEqual(line({ type: 'result', state: 'succeeded', failureReason: null, exitCode: 0, signal: null }), {
    tone: 'info',
    text: 'Run succeeded (exit 0)',
  });
  t.deepEqual(line({ type: 'result', state: 'cancelled', failureReason: null, reason: 'cost_cap_exceeded' }), {
    tone: 'warn',
    text: 'Run cancelled (cost cap exceeded)',
  });
  // Claude Code's result envelope, and Codex's turn.completed.
  t.deepEqual(
    line({ type: 'result', subtype: 'success', isError: false, numTurns: 7, costUsd: 0.31, stopReason: 'end_turn' }),
    { tone: 'info', text: 'Agent turn ended (success, 7 turns, $0.31)' },
  );
  t.deepEqual(line({ type: 'result', subtype: 'error_during_execution', isError: true, numTurns: 1 }), {
    tone: 'warn',
    text: 'Agent turn ended in an error (error_during_execution, 1 turn)',
  });
  t.deepEqual(line({ type: 'result', usage: { input_tokens: 1200, output_tokens: 80 } }), {
    tone: 'info',
    text: 'Agent turn ended (1,200 tokens in, 80 out)',
  });
});

test("each runtime's tool calls and results read briefly", (t) => {
  const use = (payload: unknown) => describeRunEvent({ kind: 'tool_use', payload });
  t.is(use({ name: 'exec_command', command: 'pytest -q', exitCode: 0 }).text, 'Tool exec_command: pytest -q');
  t.deepEqual(use({ name: 'exec_command', command: 'make', exitCode: 2 }), {
    tone: 'warn',
    text: 'Tool exec_command: make (exit 2)',
  });
  t.is(use({ name: 'Read', input: { file_path: '/w/src/a.ts' } }).text, 'Tool Read: /w/src/a.ts');
  t.is(use({ name: 'bash', input: { command: 'ls' }, status: 'completed', exitCode: 0 }).text, 'Tool bash: ls');
  t.is(
    use({ name: 'TodoWrite', input: { todos: [{ content: 'x' }] } }).text,
    'Tool TodoWrite: {"todos":[{"content":"x"}]}',
  );
  const error = describeRunEvent({
    kind: 'tool_result',
    payload: { content: [{ type: 'tool_result', content: [{ type: 'text', text: 'No such file' }], is_error: true }] },
  });
  t.deepEqual(error, { tone: 'warn', text: 'Tool error: No such file' });
});

test('a sandbox without isolation says so; a container names its image', (t) => {
  const started = (payload: unknown) => describeRunEvent({ kind: 'sandbox.started', payload });
  t.deepEqual(started({ isolation: 'process', warning: 'the agent runs unsandboxed', memory: null }), {
    tone: 'warn',
    text: 'Sandbox started (process): the agent runs unsandboxed',
  });
  t.is(
    started({ isolation: 'container', image: 'node:24', egress: ['a:443'], memory: { limitMiB: 512, enforced: false } })
      .text,
    'Sandbox started (container, node:24, 1 egress rule, 512 MiB not enforced)',
  );
});

test("agents' own lines: known types read as words, others as their type and payload", (t) => {
  t.deepEqual(describeRunEvent({ kind: 'agent.user_message', payload: { text: 'Also update the docs' } }), {
    tone: 'info',
    text: 'Input to the agent: Also update the docs',
  });
  t.deepEqual(describeRunEvent({ kind: 'agent.reasoning', payload: { text: 'Maybe the cache.' } }), {
    tone: 'output',
    text: 'Maybe the cache.',
  });
  t.deepEqual(describeRunEvent({ kind: 'agent.provider_error', payload: { message: 'overloaded' } }), {
    tone: 'error',
    text: 'Model provider error: overloaded',
  });
  t.is(
    describeRunEvent({ kind: 'agent.system.init', payload: { model: 'claude-x', cwd: '/w', tools: 14 } }).text,
    'Agent session started (claude-x, 14 tools)',
  );
  t.is(
    describeRunEvent({ kind: 'agent.item.file_change', payload: { id: 'i1', changes: [{ path: 'a.ts' }] } }).text,
    'item.file_change: {"id":"i1","changes":[{"path":"a.ts"}]}',
  );
});

test("a run's end says what its failure says of itself; an unchanged run's empty push is no warning", (t) => {
  t.deepEqual(
    describeRunEvent({
      kind: 'state_change',
      payload: {
        type: 'result',
        state: 'failed',
        failureReason: 'environment_invalid',
        message: '.svc/environment.yaml: unknown key setuptimeout',
      },
    }),
    { tone: 'error', text: 'Run failed (environment invalid): .svc/environment.yaml: unknown key setuptimeout' },
  );
  t.is(describeRunEvent({ kind: 'reap.empty_push', payload: { noChanges: true } }).tone, 'info');
  t.deepEqual(describeRunEvent({ kind: 'reap.empty_push', payload: { droppedCommit: true } }), {
    tone: 'warn',
    text: 'Nothing to push (the commit was dropped)',
  });
  // What was left uncommitted, by name: the file to commit, or to add to .gitignore.
  t.is(
    describeRunEvent({ kind: 'reap.empty_push', payload: { droppedCommit: true, dirtyPaths: ['ready.txt'] } }).text,
    'Nothing to push (the commit was dropped): uncommitted ready.txt',
  );
  t.is(
    describeRunEvent({ kind: 'reap.empty_push', payload: { dirtyPaths: ['a', 'b', 'c', 'd', 'e'] } }).text,
    'Nothing to push: uncommitted a, b, c and 2 more',
  );
});

test("an ACP agent's structured lines read as words", (t) => {
  const line = (kind: string, payload: unknown) => describeRunEvent({ kind: `agent.${kind}`, payload });
  t.deepEqual(line('message', { text: 'Done.' }), { tone: 'output', text: 'Done.' });
  t.is(
    line('tool_call', { id: 't1', title: 'Write note.txt', kind: 'edit', status: 'completed' }).text,
    'Tool call: Write note.txt (edit, completed)',
  );
  t.is(line('file_edit', { path: 'note.txt', added: 2, removed: 0, created: true }).text, 'Created: note.txt (+2 −0)');
  t.is(line('file_edit', { path: 'a.ts', added: 1, removed: 3, created: false }).text, 'Edited: a.ts (+1 −3)');
  t.is(
    line('plan', {
      entries: [
        { content: 'Read', status: 'completed' },
        { content: 'Write the note', status: 'in_progress' },
      ],
    }).text,
    'Plan: 1 of 2 steps done: Write the note',
  );
  t.deepEqual(line('permission', { title: 'Edit /etc/hosts', decision: 'refused', reason: 'outside the workspace' }), {
    tone: 'warn',
    text: 'Permission refused: Edit /etc/hosts (outside the workspace)',
  });
  t.is(line('turn_ended', { stopReason: 'end_turn' }).text, 'Agent turn ended (end turn)');
  t.is(line('steer_taken', { priority: 'urgent' }).text, 'Steering message taken as the next turn (urgent)');
  t.is(
    line('session', { agent: { name: 'gemini-cli', version: '0.61.0' } }).text,
    'Agent session started (gemini-cli, 0.61.0)',
  );
});

test('a workspace stopped for its number of files says so, not a size', (t) => {
  t.deepEqual(
    describeRunEvent({ kind: 'workspace.too_large', payload: { sizeMiB: 3, maxMiB: 10240, maxEntries: 1_000_000 } }),
    { tone: 'error', text: 'Workspace too large (more than 1,000,000 files): agent stopped' },
  );
  t.is(
    describeRunEvent({ kind: 'workspace.too_large', payload: {} }).text,
    'Workspace too large (? of ? MiB): agent stopped',
  );
});

test('unknown kinds, malformed and hostile payloads still make one line', (t) => {
  t.deepEqual(describeRunEvent({ kind: 'future.kind', payload: { a: 1 } }), {
    tone: 'info',
    text: 'future.kind: {"a":1}',
  });
  t.deepEqual(describeRunEvent({ kind: 'future.kind', payload: null }), { tone: 'info', text: 'future.kind' });
  // Wrong types fall back to neutral words instead of "undefined" or a throw.
  t.is(describeRunEvent({ kind: 'branch_pushed', payload: 'x' }).text, 'Pushed the branch');
  t.is(describeRunEvent({ kind: 'reap.pr_opened', payload: { prUrl: 42 } }).text, 'The PR opened');
  t.is(describeRunEvent({ kind: 'cost.cap_exceeded', payload: [] }).text, 'Cost cap exceeded (? of ?): agent stopped');
  t.is(describeRunEvent({ kind: 'log.stdout', payload: { text: 7 } }).text, '');
  // A kind named like an Object property is not a rendering.
  t.is(describeRunEvent({ kind: 'constructor', payload: null }).text, 'constructor');
  // Values svc interpolates stay on one line and short, whatever an agent put in them.
  const long = describeRunEvent({ kind: 'preview.failed', payload: { message: `a\nb\r\n${'x'.repeat(500)}` } }).text;
  t.false(/[\r\n]/.test(long));
  t.true(long.length < 230);
  t.true(long.endsWith('…'));
});
