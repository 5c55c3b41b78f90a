// `svc doctor` as an operator runs it: against a real running server, against nothing, against a
// server that is not svc, and with --local on data directories made for the case.
import test, { type ExecutionContext } from 'ava';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { bubblewrapWorks } from '../../sandbox/host/isolation.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { SVC_VERSION } from '../../platform/version.ts';
import { remote, svcCli, type CliResult } from '../support/cli.ts';
import { startContainerEngine } from '../support/container-engine.ts';
import { startKubeCluster } from '../support/kube-node.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let svc: TestStack | undefined;
const server = () => svc!;

test.before(async () => {
  svc = await startTestStack({ worker: false });
});
test.after.always(async () => {
  await svc?.stop();
});

const names = (result: CliResult) => result.lines.map((line) => line.name);
const check = (result: CliResult, name: string) => result.lines.find((line) => line.name === name);

test('remote: every check passes against a running server, in ndjson and pretty', async (t) => {
  const result = await svcCli(['doctor', ...remote(server())]);
  t.is(result.code, 0, result.stderr);
  t.deepEqual(names(result), [
    'server_reachable',
    'auth_valid',
    'version_match',
    'db_reachable',
    'temporal_reachable',
    'github_identity',
  ]);
  for (const line of result.lines.filter((found) => found.name !== 'github_identity'))
    t.deepEqual(line, { name: line.name, ok: true }, 'a pass says nothing more');
  t.true(check(result, 'github_identity').ok);
  t.regex(check(result, 'github_identity').message, /^svc acts as (the personal access token|no credential)/);

  const verbose = await svcCli(['doctor', '--verbose', ...remote(server())]);
  t.is(verbose.code, 0);
  t.regex(
    check(verbose, 'version_match').message,
    new RegExp(`server and client are ${SVC_VERSION.replace(/\./g, '\\.')}`),
  );
  t.regex(check(verbose, 'auth_valid').message, /^operator/);

  const pretty = await svcCli(['doctor', '--output', 'pretty', ...remote(server())]);
  t.is(pretty.code, 0);
  t.regex(pretty.stdout, /^CHECK +RESULT +MESSAGE/m);
  t.regex(pretty.stdout, /^version_match +ok/m);
});

test('remote: a wrong token fails auth_valid (exit 1) and hides the operator-only readiness checks', async (t) => {
  const result = await svcCli(['doctor', '--url', server().url, '--token', 'not-the-token']);
  t.is(result.code, 1);
  t.deepEqual(names(result), ['server_reachable', 'auth_valid', 'version_match']);
  t.like(check(result, 'auth_valid'), { ok: false, message: 'GET /whoami answered HTTP 401: invalid bearer token' });
  t.regex(check(result, 'auth_valid').hint, /operator-token/);
  t.true(check(result, 'version_match').ok);

  const noToken = await svcCli(['doctor', '--url', server().url]);
  t.is(noToken.code, 1);
  t.like(check(noToken, 'auth_valid'), { ok: false, message: 'no token to check' });
});

test('remote: --no-auth skips auth_valid; the public readiness checks still run', async (t) => {
  const result = await svcCli(['doctor', '--no-auth', '--url', server().url]);
  t.is(result.code, 0, result.stderr);
  // The server wants a token, so GET /github-app answers nothing to say.
  t.deepEqual(names(result), ['server_reachable', 'version_match', 'db_reachable', 'temporal_reachable']);
});

test('remote: an unreachable server is exit 3 and the only check', async (t) => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const result = await svcCli(['doctor', '--url', url, '--token', 'x']);
  t.is(result.code, 3);
  t.is(result.lines.length, 1);
  t.like(result.lines[0], { name: 'server_reachable', ok: false });
  t.regex(result.lines[0].message, new RegExp(`^cannot reach ${url}: .*ECONNREFUSED`));
  t.truthy(result.lines[0].hint);
  t.is((await svcCli(['doctor', '--output', 'yaml'])).code, 2);
});

test('remote: a URL that answers but is not svc fails server_reachable and stops there', async (t) => {
  const other = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>nope</h1>'));
  const url = await listenOnLoopback(other);
  t.teardown(() => closeServer(other));
  const result = await svcCli(['doctor', '--url', url, '--token', 'x']);
  t.is(result.code, 1, result.stderr);
  t.deepEqual(names(result), ['server_reachable'], result.stderr);
  t.regex(result.lines[0].message, /answered HTTP 404/);
});

/** The environment `svc serve` would read on a fresh host, pointed at the suite's Temporal. */
function hostEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SVC_DATA_DIR: dataDir,
    DATABASE_URL: '',
    SVC_PROJECTS_DIR: '',
    SVC_API_TOKEN: '',
    SVC_SANDBOX: '',
    TEMPORAL_ADDRESS: suiteTemporalAddress(),
    ...extra,
  };
}

const BUILTIN_CLI_AGENTS = ['agent:claude-code', 'agent:codex', 'agent:opencode'];

const LOCAL_CHECKS = [
  'config',
  'data_dir',
  'disk_space',
  'disk_use',
  'operator_token',
  'agents',
  'git',
  'git_identity',
  'db_reachable',
  'projects_root',
];

test('--local on a data directory svc has never used: warnings, and no file created', async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-doctor-')), 'data');
  const result = await svcCli(['doctor', '--local'], hostEnv(dataDir));
  const expected = [
    ...LOCAL_CHECKS,
    'bwrap',
    ...BUILTIN_CLI_AGENTS,
    'temporal_reachable',
    'svc_config',
    'stale_sandbox_workspaces',
  ];
  t.deepEqual(names(result), expected, result.stderr);
  t.like(check(result, 'data_dir'), { ok: true, message: `${dataDir} does not exist yet: svc serve creates it` });
  t.like(check(result, 'operator_token'), { ok: true });
  t.regex(check(result, 'operator_token').message, /svc serve mints one/);
  t.regex(check(result, 'db_reachable').message, /no database yet/);
  t.deepEqual(check(result, 'temporal_reachable'), { name: 'temporal_reachable', ok: true });
  t.is(check(result, 'bwrap').ok, bubblewrapWorks(), 'the same probe the worker runs');
  t.is(result.code, result.lines.every((line) => line.ok) ? 0 : 1);
  t.false(existsSync(dataDir), 'a check creates nothing');

  const broken = await svcCli(
    ['doctor', '--local'],
    hostEnv(dataDir, {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/nothing',
      SVC_PROJECTS_DIR: '/etc/hostname/projects',
      SVC_SANDBOX: 'process',
      SVC_ALLOW_UNSANDBOXED: '1',
      SVC_AGENTS_FILE: '/nonexistent/agents.yaml',
    }),
  );
  t.like(check(broken, 'agents'), { ok: false, hint: 'fix SVC_AGENTS_FILE' });
  t.is(broken.code, 1);
  t.like(check(broken, 'db_reachable'), { ok: false, hint: 'check DATABASE_URL' });
  t.regex(check(broken, 'db_reachable').message, /127\.0\.0\.1:9\/nothing: .*ECONNREFUSED/);
  t.like(check(broken, 'projects_root'), { ok: false, message: '/etc/hostname is not a directory' });
  t.like(check(broken, 'bwrap'), { ok: true });
  t.regex(check(broken, 'bwrap').message, /unsandboxed/);

  const noEngine = await svcCli(
    ['doctor', '--local'],
    hostEnv(dataDir, { SVC_SANDBOX: 'container', SVC_CONTAINER_ENGINE: `unix://${dataDir}-nothing.sock` }),
  );
  t.false(names(noEngine).includes('bwrap'), 'the container backend is checked instead of bubblewrap');
  t.like(check(noEngine, 'agent:codex'), { ok: true }, 'a warning: the engine check fails instead');
  t.regex(check(noEngine, 'agent:codex').message, /not started: .*\(container_engine says why\)/);
  t.like(check(noEngine, 'container_engine'), { ok: false, hint: 'docs/sandboxes.md, Running it' });
  t.regex(check(noEngine, 'container_engine').message, /does not answer/);

  const noGateway = await svcCli(['doctor', '--local'], hostEnv(dataDir, { SVC_SANDBOX: 'kubernetes' }));
  t.false(names(noGateway).includes('bwrap'), 'the cluster is checked instead of bubblewrap');
  t.like(check(noGateway, 'kubernetes_api'), { ok: false, hint: 'docs/sandboxes.md, The Kubernetes backend' });
  t.regex(check(noGateway, 'kubernetes_api').message, /SVC_KUBERNETES_GATEWAY_HOST/);
  const noCluster = await svcCli(
    ['doctor', '--local'],
    hostEnv(dataDir, {
      SVC_SANDBOX: 'kubernetes',
      SVC_KUBERNETES_GATEWAY_HOST: '10.0.0.1',
      KUBECONFIG: join(dataDir, 'no-such-kubeconfig'),
    }),
  );
  t.regex(check(noCluster, 'kubernetes_api').message, /the Kubernetes API does not answer/);

  const misconfigured = await svcCli(['doctor', '--local'], hostEnv(dataDir, { SVC_AUTH: 'nonsense' }));
  t.is(misconfigured.code, 1);
  t.deepEqual(names(misconfigured), ['config'], 'nothing else can be checked without a configuration');
});

test('--local on a used data directory: project configs, stale workspaces, the token file', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  chmodSync(dataDir, 0o700);
  writeFileSync(join(dataDir, 'operator-token'), 'a-token-of-forty-three-characters-xxxxxxxxx\n', { mode: 0o600 });
  const clone = (name: string, files: Record<string, string>) => {
    const root = join(dataDir, 'projects', 'acme', name);
    mkdirSync(join(root, '.git'), { recursive: true });
    mkdirSync(join(root, '.svc'), { recursive: true });
    for (const [file, text] of Object.entries(files)) writeFileSync(join(root, file), text);
    return root;
  };
  const readModel = await initORM({ databaseUrl: join(dataDir, 'svc.sqlite') });
  try {
    await migrate(readModel);
    const sql = readModel.em().getConnection();
    const project = (id: string, path: string) =>
      sql.execute(
        `insert into projects (id, git_url, local_path, default_branch, added_at) values (?, ?, ?, 'main', ?)`,
        [id, `https://github.com/acme/${id}`, path, Date.now()],
      );
    await project('prj_broken', clone('broken', { '.svc/config.yaml': 'defaultRole: [unclosed\n' }));
    await project('prj_legacy', clone('legacy', { '.svc/defaults.json': '{"defaultRole":"shell"}' }));
    await project('prj_fine', clone('fine', { '.svc/config.yaml': 'defaultRole: shell\n' }));
    await sql.execute(
      `insert into runs (id, agent_name, state, created_at, prompt, "trigger", updated_at)
       values ('run_done', 'shell', 'succeeded', ?, 'echo', 'cli', ?)`,
      [Date.now(), Date.now()],
    );
  } finally {
    await readModel.close();
  }
  for (const dir of [
    'workspaces/run_done',
    'workspaces/run_gone',
    'workspaces/run_cut.partial-run_cut',
    'sandboxes/run_done',
  ])
    mkdirSync(join(dataDir, dir), { recursive: true });
  writeFileSync(join(dataDir, 'workspaces/run_done/data'), randomBytes(1024 * 1024));

  const result = await svcCli(['doctor', '--local', '--verbose'], hostEnv(dataDir));
  t.is(result.code, 1, 'a broken project config is a failure');
  t.like(check(result, 'operator_token'), { ok: true, message: `from ${join(dataDir, 'operator-token')}` });
  t.like(check(result, 'db_reachable'), { ok: true });
  t.regex(check(result, 'db_reachable').message, /^sqlite at .*schema up to date$/);
  t.like(check(result, 'svc_config'), { ok: false });
  t.regex(check(result, 'svc_config').message, /^prj_broken: \.svc\/config\.yaml: /);
  t.notRegex(check(result, 'svc_config').message, /prj_fine|prj_legacy/);
  t.like(check(result, 'svc_config_deprecations'), { ok: true, hint: 'svc config migrate' });
  t.regex(check(result, 'svc_config_deprecations').message, /^prj_legacy: \.svc\/defaults\.json: /);
  const stale = check(result, 'stale_sandbox_workspaces');
  t.true(stale.ok, 'a warning');
  t.regex(stale.message, /^2 left behind: /);
  t.regex(stale.message, /run_gone/);
  t.regex(stale.message, /run_cut\.partial-run_cut/);
  t.notRegex(stale.message, /run_done/);
  t.regex(stale.message, /1 of ended runs kept/, '--verbose adds what was found');
  t.like(check(result, 'disk_space'), { ok: true });
  t.regex(
    check(result, 'disk_space').message,
    new RegExp(`free of .* on the filesystem of ${dataDir}; new runs are refused below 2048 MiB`),
  );
  t.regex(check(result, 'disk_use').message, /workspaces 1\.0 MiB/, 'each area, measured');
  t.regex(check(result, 'disk_use').message, /read model \d/);
  t.regex(check(result, 'disk_use').message, /projects \d/);

  // Below the floor: a warning naming the floor, with where the room went, verbose or not.
  const full = await svcCli(['doctor', '--local'], hostEnv(dataDir, { SVC_DISK_MIN_FREE_MIB: '999999999' }));
  t.is(full.code, 1, 'still the broken project config alone: a full disk is a warning');
  t.like(check(full, 'disk_space'), { ok: true });
  t.regex(check(full, 'disk_space').message, /^only .* free of .*: new runs are refused below 999999999 MiB/);
  t.regex(check(full, 'disk_space').hint, /workspaces of ended runs/);
  t.like(check(full, 'disk_use'), { ok: true });
  t.regex(check(full, 'disk_use').message, /^workspaces 1\.0 MiB, /, 'the largest area first');
});

test("--local starts each agent's CLI in a sandbox from svc's install and names the one that fails", async (t) => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-doctor-')), 'data');
  const agentsFile = join(dirname(dataDir), 'agents.yaml');
  writeFileSync(
    agentsFile,
    [
      'agents:',
      '  - { name: gone, runtime: codex, command: ["/nonexistent/codex"] }',
      '  - { name: sulky, runtime: claude-code, command: ["bash", "-c", "echo no key for you >&2; exit 3", "sulky"] }',
      '  - { name: plain, command: ["/nonexistent/plain"] }',
    ].join('\n'),
  );
  // The PATH an operator's shell gives svc: nothing of svc's node_modules on it.
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(delimiter);
  const result = await svcCli(
    ['doctor', '--local', '--verbose'],
    hostEnv(dataDir, { SVC_AGENTS_FILE: agentsFile, PATH: path }),
  );
  t.is(result.code, 1, result.stderr);
  const agents = names(result).filter((name) => name.startsWith('agent:'));
  t.deepEqual(agents, [...BUILTIN_CLI_AGENTS, 'agent:gone', 'agent:sulky'].sort(), 'a command agent is not started');
  const isolation = bubblewrapWorks() ? 'bubblewrap' : 'process';
  for (const [name, version] of [
    ['agent:claude-code', /Claude Code/],
    ['agent:codex', /codex/i],
    ['agent:opencode', /\d+\.\d+\.\d+/],
  ] as const) {
    t.true(check(result, name).ok, JSON.stringify(check(result, name)));
    t.regex(check(result, name).message, new RegExp(`--version in a ${isolation} sandbox: `), name);
    t.regex(check(result, name).message, version, name);
  }
  t.like(check(result, 'agent:gone'), { ok: false });
  t.regex(
    check(result, 'agent:gone').message,
    /^`\/nonexistent\/codex --version` in a \w+ sandbox found no such command: /,
  );
  t.regex(check(result, 'agent:gone').message, /ENOENT/);
  t.like(check(result, 'agent:sulky'), { ok: false, hint: 'runs of this agent would fail the same way' });
  t.regex(check(result, 'agent:sulky').message, /ended with 3: no key for you$/);
});

/** An agents file with a CLI the image does not hold beside the built-ins. */
function agentsWithAMissingOne(dataDir: string): string {
  const agentsFile = join(dirname(dataDir), 'agents.yaml');
  writeFileSync(agentsFile, 'agents:\n  - { name: gone, runtime: codex, command: ["/nonexistent/codex"] }\n');
  return agentsFile;
}

/** The built-ins answer `--version` from the backend's sandbox; the missing one is named, with the image as the fix. */
function assertAgentsProbedIn(t: ExecutionContext, result: CliResult, isolation: string): void {
  for (const name of BUILTIN_CLI_AGENTS) {
    t.true(check(result, name).ok, JSON.stringify(check(result, name)));
    t.regex(check(result, name).message, new RegExp(`--version in a ${isolation} sandbox: .*\\d+\\.\\d+`), name);
  }
  t.like(check(result, 'agent:gone'), { ok: false });
  t.regex(check(result, 'agent:gone').message, new RegExp(`in a ${isolation} sandbox found no such command`));
  t.regex(check(result, 'agent:gone').hint, /the agent image must hold it/);
}

test("--local on the container backend starts each agent's CLI in a container of the agent image", async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-doctor-')), 'data');
  const result = await svcCli(
    ['doctor', '--local', '--verbose'],
    hostEnv(dataDir, { ...engine.env, SVC_AGENTS_FILE: agentsWithAMissingOne(dataDir) }),
  );
  t.like(check(result, 'container_engine'), { ok: true }, result.stderr);
  assertAgentsProbedIn(t, result, 'container');
  const left = await engine.engine.listSandboxes();
  t.deepEqual(
    left.filter((container) => /doctor/.test(JSON.stringify(container.Labels))),
    [],
    'no container is left',
  );
});

test("--local on the Kubernetes backend starts each agent's CLI in a pod", async (t) => {
  const { kube, env } = await startKubeCluster(t);
  const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-doctor-')), 'data');
  const result = await svcCli(
    ['doctor', '--local', '--verbose'],
    hostEnv(dataDir, { ...env, SVC_AGENTS_FILE: agentsWithAMissingOne(dataDir) }),
  );
  t.like(check(result, 'kubernetes_api'), { ok: true }, result.stderr);
  assertAgentsProbedIn(t, result, 'kubernetes');
  t.is(kube.created.length, BUILTIN_CLI_AGENTS.length + 1, 'each agent was asked in a pod of its own');
  t.deepEqual([...kube.pods.keys()], [], 'no pod is left');
});
