// Settings that must refuse to start rather than run unsafely.
import test from 'ava';
import { loadConfig } from '../../platform/config.ts';
import { sandboxCpuLimit } from '../../platform/sandbox-settings.ts';

test('SVC_AUTH is token or public; public mode needs an allowlist', (t) => {
  t.is(loadConfig({}).auth.mode, 'token');
  t.throws(() => loadConfig({ SVC_AUTH: 'open' }), { message: /SVC_AUTH must be token or public/ });
  t.throws(() => loadConfig({ SVC_AUTH: 'public' }), { message: /SVC_PUBLIC_ALLOWLIST/ });
  t.deepEqual(loadConfig({ SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'Acme, other/repo' }).auth, {
    mode: 'public',
    publicAllowlist: ['acme', 'other/repo'],
    spectatorLimits: { ratePerSecond: 10, burst: 60, maxInFlight: 6, trustedProxies: [] },
  });
});

test('limits and timings reject nonsense', (t) => {
  t.throws(() => loadConfig({ SVC_SANDBOX_MEMORY_MIB: '8' }), { message: /SVC_SANDBOX_MEMORY_MIB/ });
  for (const cpu of ['5', '1.5', 'lots', '64001'])
    t.throws(() => loadConfig({ SVC_SANDBOX_CPU_MILLICORES: cpu }), { message: /SVC_SANDBOX_CPU_MILLICORES/ });
  t.is(loadConfig({ SVC_SANDBOX_CPU_MILLICORES: '1500' }).sandbox.cpuMillicores, 1500);
  t.is(loadConfig({}).sandbox.cpuMillicores, null);
  t.throws(() => loadConfig({ SVC_PLAN_RUN_MERGE_TIMEOUT_MS: '-5' }), { message: /non-negative integer/ });
  t.is(loadConfig({ SVC_PLAN_RUN_MERGE_POLL_MS: '10' }).planTiming.mergePollMs, 1000);
});

test("a worker's capacity: bounded defaults for a small box, each settable", (t) => {
  t.deepEqual(loadConfig({}).workerCapacity, {
    maxCachedWorkflows: 64,
    maxConcurrentActivities: 200,
    maxConcurrentWorkflowTasks: 40,
  });
  const set = loadConfig({
    SVC_WORKER_MAX_CACHED_WORKFLOWS: '0',
    SVC_WORKER_MAX_ACTIVITIES: '16',
    SVC_WORKER_MAX_WORKFLOW_TASKS: '1',
  }).workerCapacity;
  // No cache at all stalled a worker with a backlog of runs; the SDK's minimum with a cache is 2.
  t.deepEqual(set, { maxCachedWorkflows: 2, maxConcurrentActivities: 16, maxConcurrentWorkflowTasks: 2 });
  t.throws(() => loadConfig({ SVC_WORKER_MAX_CACHED_WORKFLOWS: 'lots' }), { message: /non-negative integer/ });
});

test("a project's CPU limit: the operator's is its default and its ceiling", (t) => {
  const capped = loadConfig({ SVC_SANDBOX_CPU_MILLICORES: '1000' }).sandbox;
  t.is(sandboxCpuLimit(null, capped), 1000);
  t.is(sandboxCpuLimit(500, capped), 500);
  t.is(sandboxCpuLimit(64_000, capped), 1000, 'a project cannot raise it');
  t.is(sandboxCpuLimit(2000, loadConfig({}).sandbox), 2000, 'without an operator limit, the project says');
  t.is(sandboxCpuLimit(null, loadConfig({}).sandbox), null);
});

test("SVC_GITHUB_GIT_URL: where svc's git reaches GitHub, a URL without credentials", (t) => {
  t.is(loadConfig({}).githubGitUrl, 'https://github.com/');
  t.is(
    loadConfig({ SVC_GITHUB_GIT_URL: 'https://mirror.example/github' }).githubGitUrl,
    'https://mirror.example/github/',
  );
  t.is(loadConfig({ SVC_GITHUB_GIT_URL: 'file:///srv/repos/' }).githubGitUrl, 'file:///srv/repos/');
  for (const bad of [
    'mirror.example',
    'ssh://git@mirror.example/',
    'ext::sh -c evil',
    'https://user:pw@mirror.example/',
  ])
    t.throws(() => loadConfig({ SVC_GITHUB_GIT_URL: bad }), { message: /SVC_GITHUB_GIT_URL/ });
});
