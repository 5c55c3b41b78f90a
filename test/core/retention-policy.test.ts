// Which of a run's directories a retention pass may remove, and when (core/retention-policy.ts).
import test from 'ava';
import { environmentsDue, runFilesDue, type RunRetentionFacts } from '../../core/retention-policy.ts';
import { parseRetentionSettings } from '../../platform/retention-settings.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const now = 100 * DAY;
const retention = { sandboxesMs: 10 * MINUTE, workspacesMs: 7 * DAY };
const ended = (ago: number, facts: Partial<RunRetentionFacts> = {}): RunRetentionFacts => ({
  state: 'succeeded',
  endedAtMs: now - ago,
  prState: null,
  previewState: null,
  ...facts,
});

test('a run with no PR, or a merged or closed one, loses both after the sandbox grace', (t) => {
  for (const prState of [null, 'merged', 'closed_unmerged'] as const) {
    t.deepEqual(runFilesDue(ended(5 * MINUTE, { prState }), retention, now), { workspace: false, sandbox: false });
    t.deepEqual(runFilesDue(ended(11 * MINUTE, { prState }), retention, now), { workspace: true, sandbox: true });
  }
});

test("an open PR keeps the workspace for SVC_RETENTION_WORKSPACES, not the sandbox's records", (t) => {
  t.deepEqual(runFilesDue(ended(DAY, { prState: 'open' }), retention, now), { workspace: false, sandbox: true });
  t.deepEqual(runFilesDue(ended(8 * DAY, { prState: 'open' }), retention, now), { workspace: true, sandbox: true });
});

test('nothing of a live run, a running preview, or a run svc does not know is due', (t) => {
  const none = { workspace: false, sandbox: false };
  t.deepEqual(runFilesDue(null, retention, now), none);
  for (const state of ['queued', 'running'] as const)
    t.deepEqual(runFilesDue(ended(30 * DAY, { state, endedAtMs: null }), retention, now), none);
  for (const previewState of ['starting', 'live'] as const)
    t.deepEqual(runFilesDue(ended(30 * DAY, { prState: 'open', previewState }), retention, now), none);
  t.deepEqual(runFilesDue(ended(30 * DAY, { previewState: 'torn-down' }), retention, now), {
    workspace: true,
    sandbox: true,
  });
});

test('off keeps: workspaces off keeps every workspace, sandboxes off keeps the records', (t) => {
  t.deepEqual(runFilesDue(ended(30 * DAY), { sandboxesMs: 10 * MINUTE, workspacesMs: null }, now), {
    workspace: false,
    sandbox: true,
  });
  t.deepEqual(runFilesDue(ended(30 * DAY), { sandboxesMs: null, workspacesMs: 7 * DAY }, now), {
    workspace: true,
    sandbox: false,
  });
});

test('SVC_RETENTION_* take durations or off, and say what they take', (t) => {
  t.deepEqual(parseRetentionSettings({}), {
    intervalMs: 3600_000,
    workspacesMs: 7 * DAY,
    sandboxesMs: 10 * MINUTE,
    eventsMs: 90 * DAY,
    salvageMs: 30 * DAY,
    environmentsMs: 14 * DAY,
    temporalMs: 30 * DAY,
  });
  t.like(parseRetentionSettings({ SVC_RETENTION_ENVIRONMENTS: 'off' }), { environmentsMs: null });
  t.like(parseRetentionSettings({ SVC_RETENTION_EVENTS: 'off', SVC_RETENTION_INTERVAL: '90s' }), {
    eventsMs: null,
    intervalMs: 90_000,
  });
  t.throws(() => parseRetentionSettings({ SVC_RETENTION_WORKSPACES: '7' }), {
    message: 'SVC_RETENTION_WORKSPACES must be a duration such as 90s, 30m, 12h or 7d, or off, not "7"',
  });
  t.throws(() => parseRetentionSettings({ SVC_RETENTION_INTERVAL: 'off' }), { message: /SVC_RETENTION_INTERVAL/ });
  t.throws(() => parseRetentionSettings({ SVC_RETENTION_TEMPORAL: '12h' }), { message: /at least 1d/ });
});

test('kept environments: unused past their retention and mounted by none, least recently used first', (t) => {
  const now = 100 * DAY;
  const entry = (path: string, idleDays: number, inUse = false) => ({ path, lastUsedMs: now - idleDays * DAY, inUse });
  const entries = [entry('recent', 1), entry('older', 20), entry('oldest', 40), entry('mounted', 60, true)];
  t.deepEqual(environmentsDue(entries, 14 * DAY, now), ['oldest', 'older']);
  t.deepEqual(environmentsDue(entries, null, now), [], 'off keeps them all');
});
