// Settings that must refuse to start rather than run unsafely.
import test from 'ava';
import { loadConfig } from '../../platform/config.ts';
import { totalmem } from 'node:os';
import { defaultSandboxMemoryMiB, sandboxCpuLimit } from '../../platform/sandbox-settings.ts';

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

test('the names the API answers to: SVC_ALLOWED_HOSTS and the hosts svc is told it is reached at', (t) => {
  t.deepEqual(loadConfig({}).allowedHosts, []);
  t.deepEqual(
    loadConfig({
      SVC_ALLOWED_HOSTS: ' Svc.Internal, svc-api.,[fd00::1]',
      SVC_PUBLIC_URL: 'https://svc.example.com/',
      SVC_API_URL: 'http://svc-api:8080',
      SVC_HOST: '10.0.0.5',
      SVC_PREVIEW_MODE: 'subdomain',
      SVC_PREVIEW_HOST: 'previews.example.com',
    }).allowedHosts,
    ['svc.internal', 'svc-api', '[fd00::1]', 'svc.example.com', 'previews.example.com'],
  );
  t.deepEqual(loadConfig({ SVC_HOST: 'svc.lan' }).allowedHosts, ['svc.lan']);
  for (const bad of ['https://svc.example.com', 'svc.example.com:8080', 'svc/x', '*.example.com'])
    t.throws(() => loadConfig({ SVC_ALLOWED_HOSTS: bad }), { message: /SVC_ALLOWED_HOSTS must list host names/ }, bad);
  t.throws(() => loadConfig({ SVC_PUBLIC_URL: 'svc.example.com' }), { message: /SVC_PUBLIC_URL must be a URL/ });
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

test('memory and workspace limits hold by default; 0 or off turns each off', (t) => {
  const defaults = loadConfig({}).sandbox;
  t.is(defaults.memoryLimitMiB, defaultSandboxMemoryMiB('auto'));
  t.true(defaults.memoryLimitMiB! <= 4096 && defaults.memoryLimitMiB! <= totalmem() / 1024 ** 2 / 2);
  t.is(defaults.workspaceMaxMiB, 10240);
  for (const off of ['0', 'off']) {
    const settings = loadConfig({ SVC_SANDBOX_MEMORY_MIB: off, SVC_RUN_WORKSPACE_MAX_MIB: off }).sandbox;
    t.is(settings.memoryLimitMiB, null);
    t.is(settings.workspaceMaxMiB, null);
  }
  t.is(loadConfig({ SVC_SANDBOX_MEMORY_MIB: '512' }).sandbox.memoryLimitMiB, 512);
  t.is(loadConfig({ SVC_RUN_WORKSPACE_MAX_MIB: '5' }).sandbox.workspaceMaxMiB, 5);
  for (const bad of ['-1', '1.5', 'lots'])
    t.throws(() => loadConfig({ SVC_RUN_WORKSPACE_MAX_MIB: bad }), { message: /SVC_RUN_WORKSPACE_MAX_MIB/ });
  // Half of what the worker may use on a small host; a pod's node is not this host: 4096.
  t.is(defaultSandboxMemoryMiB('bubblewrap', 3000), 1500);
  t.is(defaultSandboxMemoryMiB('container', 64 * 1024), 4096);
  t.is(defaultSandboxMemoryMiB('kubernetes', 3000), 4096);
});

test('the free-space floor: 2048 MiB or 1 % by default, either part settable or off', (t) => {
  t.deepEqual(loadConfig({}).diskFloor, { minFreeMiB: 2048, minFreePercent: 1 });
  t.deepEqual(loadConfig({ SVC_DISK_MIN_FREE_MIB: 'off', SVC_DISK_MIN_FREE_PERCENT: '0' }).diskFloor, {
    minFreeMiB: 0,
    minFreePercent: 0,
  });
  t.deepEqual(loadConfig({ SVC_DISK_MIN_FREE_MIB: '10240', SVC_DISK_MIN_FREE_PERCENT: '2.5' }).diskFloor, {
    minFreeMiB: 10240,
    minFreePercent: 2.5,
  });
  for (const bad of ['-1', '1.5', 'lots'])
    t.throws(() => loadConfig({ SVC_DISK_MIN_FREE_MIB: bad }), { message: /SVC_DISK_MIN_FREE_MIB/ });
  for (const bad of ['100', '-1', 'half'])
    t.throws(() => loadConfig({ SVC_DISK_MIN_FREE_PERCENT: bad }), { message: /SVC_DISK_MIN_FREE_PERCENT/ });
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
