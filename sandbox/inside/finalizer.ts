// The sandbox half of finalization, run inside the agent's sandbox after the agent exits (bound
// read-only at /run/svc/bin/finalizer.mjs): fetch the intent, count what HEAD holds over the base,
// probe for uncommitted work, hand the commits over as a git bundle in the outbox, and post the
// result. It holds no credential and pushes nothing: svc fetches the bundle into a repository of
// its own and pushes from there, so nothing the agent wrote (hooks, config) runs with svc's rights.
// Self-contained on purpose (node: imports and types only).
//   SVC_BASE_URL=… SVC_RUN_ID=… SVC_OUTBOX=… node finalizer.mjs
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FinalizeIntent, FinalizeResult } from '../../core/finalize.ts';

const baseUrl = process.env.SVC_BASE_URL!;
// Only an unsandboxed finalizer carries the run token; in a sandbox the callback proxy adds it.
const token = process.env.SVC_API_TOKEN;
const runId = process.env.SVC_RUN_ID!;
const outbox = process.env.SVC_OUTBOX!;
/**
 * Until when the finalizer keeps trying to reach svc (the API may be restarting, Temporal down):
 * the end of the workflow's wait for its result. After it, nobody is listening any more.
 */
const DEADLINE = Number(process.env.SVC_FINALIZE_DEADLINE ?? Date.now() + 120_000);
/** The workspace's config is the agent's (fsmonitor, filters): no git command may hang the finalizer. */
const GIT_TIMEOUT_MS = 5 * 60_000;
/** Named as core/finalize.ts's BUNDLE_FILE: the host side reads it from the outbox. */
const BUNDLE_FILE = 'branch.bundle';

function git(args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 16 << 20, timeout: GIT_TIMEOUT_MS },
      (error, stdout, stderr) => resolve({ ok: !error, stdout: stdout.trim(), stderr: stderr.trim() }),
    );
  });
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const headers: Record<string, string> = {
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(body ? { 'content-type': 'application/json' } : {}),
  };
  const response = await fetch(`${baseUrl}/runs/${runId}${path}`, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function fetchIntent(): Promise<FinalizeIntent> {
  while (Date.now() < DEADLINE) {
    const { intent } = await call('GET', '/finalize-intent').catch(() => ({ intent: null }));
    if (intent) return intent as FinalizeIntent;
    await sleep(500);
  }
  throw new Error('no finalize intent was parked in time');
}

async function finalize(intent: FinalizeIntent): Promise<FinalizeResult> {
  const stages: FinalizeResult['stages'] = [];
  const base = `refs/remotes/origin/${intent.baseBranch}`;
  const counted = await git(['rev-list', '--count', `${base}..HEAD`]);
  const commitsAhead = counted.ok ? Number(counted.stdout) : null;
  stages.push(
    counted.ok
      ? { stage: 'commits_ahead', status: 'ok' }
      : { stage: 'commits_ahead', status: 'failed', error: counted.stderr.slice(-4000) },
  );
  const status = await git(['status', '--porcelain', '--untracked-files=all']);
  const dirtyPaths = status.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  let bundle: FinalizeResult['bundle'] = null;
  const file = `${outbox}/${BUNDLE_FILE}`;
  rmSync(file, { force: true });
  if (commitsAhead !== null && commitsAhead > 0) {
    const made = await git(['bundle', 'create', '--quiet', file, `${base}..HEAD`]);
    const tip = await git(['rev-parse', 'HEAD']);
    if (made.ok && tip.ok) bundle = { file: BUNDLE_FILE, tip: tip.stdout };
    stages.push(
      made.ok
        ? { stage: 'branch_bundle', status: 'ok' }
        : { stage: 'branch_bundle', status: 'failed', error: made.stderr.slice(-4000) },
    );
  } else {
    stages.push({ stage: 'branch_bundle', status: 'skipped' });
  }
  return {
    pushed: false,
    commitsAhead,
    emptyPush: commitsAhead === 0,
    dirty: dirtyPaths.length > 0,
    dirtyPaths: dirtyPaths.slice(0, 1000),
    workspacePlansBody: null,
    events: [],
    artifacts: {},
    prBranch: null,
    stages,
    bundle,
  };
}

const intent = await fetchIntent();
const result = await finalize(intent);
// Posted until it is taken (the answer is idempotent), backing off to one try every 3 s.
for (let attempt = 1; ; attempt++) {
  try {
    await call('POST', '/finalize-result', { version: 1, attemptId: intent.attemptId, result });
    break;
  } catch (error) {
    if (Date.now() > DEADLINE) throw error;
    await sleep(Math.min(3000, 250 * 2 ** attempt));
  }
}
