// The sandbox half of finalization, run inside the sandbox after the agent exits: fetch the intent,
// push HEAD to the run's branch, count what is ahead of the base, probe for uncommitted work, and
// post the result. Talks to svc only through the run's own callback routes and token.
//   SVC_BASE_URL=… SVC_API_TOKEN=svc1.… SVC_RUN_ID=… node activities/sandbox/finalizer.ts
import { execFile } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FinalizeIntent, FinalizeResult } from '../../core/finalize.ts';

const baseUrl = process.env.SVC_BASE_URL!;
const token = process.env.SVC_API_TOKEN!;
const runId = process.env.SVC_RUN_ID!;
const INTENT_WAIT_MS = Number(process.env.SVC_FINALIZE_INTENT_WAIT_MS ?? 120_000);

function git(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env }, maxBuffer: 16 << 20 }, (error, stdout, stderr) => resolve({ ok: !error, stdout: stdout.trim(), stderr: stderr.trim() }));
  });
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}/runs/${runId}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function fetchIntent(): Promise<FinalizeIntent> {
  const deadline = Date.now() + INTENT_WAIT_MS;
  while (Date.now() < deadline) {
    const { intent } = await call('GET', '/finalize-intent').catch(() => ({ intent: null }));
    if (intent) return intent as FinalizeIntent;
    await sleep(500);
  }
  throw new Error('no finalize intent was parked in time');
}

function pushEnv(gitToken: string | undefined): NodeJS.ProcessEnv {
  if (!gitToken) return {};
  const basic = Buffer.from(`x-access-token:${gitToken}`).toString('base64');
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader', GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}` };
}

async function finalize(intent: FinalizeIntent): Promise<FinalizeResult> {
  const stages: FinalizeResult['stages'] = [];
  const counted = await git(['rev-list', '--count', `refs/remotes/origin/${intent.baseBranch}..HEAD`]);
  const commitsAhead = counted.ok ? Number(counted.stdout) : null;
  stages.push(counted.ok ? { stage: 'commits_ahead', status: 'ok' } : { stage: 'commits_ahead', status: 'failed', error: counted.stderr });
  const status = await git(['status', '--porcelain', '--untracked-files=all']);
  const dirtyPaths = status.stdout.split('\n').filter(Boolean).map((line) => line.slice(3));
  let pushed = false;
  if (intent.push && commitsAhead !== null && commitsAhead > 0) {
    const push = await git(['push', '--porcelain', 'origin', `HEAD:refs/heads/${intent.branch}`], pushEnv(intent.gitToken));
    pushed = push.ok;
    stages.push(push.ok ? { stage: 'branch_push', status: 'ok' } : { stage: 'branch_push', status: 'failed', error: push.stderr.slice(-4000) });
  } else {
    stages.push({ stage: 'branch_push', status: 'skipped' });
  }
  return { pushed, commitsAhead, emptyPush: commitsAhead === 0, dirty: dirtyPaths.length > 0, dirtyPaths: dirtyPaths.slice(0, 1000), workspacePlansBody: null, events: [], artifacts: {}, prBranch: pushed ? intent.branch : null, stages };
}

// Exactly one finalizer per run: the first to create the claim does the work.
if (process.env.SVC_FINALIZER_CLAIM) {
  try {
    closeSync(openSync(process.env.SVC_FINALIZER_CLAIM, 'wx'));
  } catch {
    process.exit(0);
  }
}

const intent = await fetchIntent();
const result = await finalize(intent);
for (let attempt = 1; ; attempt++) {
  try {
    await call('POST', '/finalize-result', { version: 1, attemptId: intent.attemptId, result });
    break;
  } catch (error) {
    if (attempt >= 5) throw error;
    await sleep(1000 * 2 ** (attempt - 1));
  }
}
