// .svc/environment.yaml's schema: what a run takes from it, and a clear refusal of anything else
// (an unknown key, a key svc does not support yet, a bad duration, a path outside the repository,
// a service svc would not start).
import test from 'ava';
import { isDefaultCacheKeyFile, parseEnvironment } from '../../core/environment.ts';
import { runShares } from '../../core/environment-services.ts';

test('a setup script with the defaults', (t) => {
  t.deepEqual(parseEnvironment('setup: npm ci\n'), {
    plan: { setup: 'npm ci', setupTimeoutMs: 600_000, cacheKey: null },
  });
  t.deepEqual(
    parseEnvironment(
      'setup: |\n  uv sync\n  uv run pytest --collect-only\nsetupTimeout: 1h30m\ncacheKey: [uv.lock, tools]\n',
    ),
    {
      plan: {
        setup: 'uv sync\nuv run pytest --collect-only\n',
        setupTimeoutMs: 5_400_000,
        cacheKey: ['uv.lock', 'tools'],
      },
    },
  );
});

test('services or MCP servers without a setup: nothing to set up', (t) => {
  t.deepEqual(parseEnvironment('mcp:\n  - name: probe\n    command: [node, probe.mjs]\n'), {
    plan: {
      setup: null,
      setupTimeoutMs: 600_000,
      cacheKey: null,
      mcp: [{ name: 'probe', command: ['node', 'probe.mjs'] }],
    },
  });
});

test('every problem is named, with the file', (t) => {
  const refusal = (text: string) => {
    const read = parseEnvironment(text);
    return 'invalid' in read ? read.invalid : 'accepted';
  };
  t.is(refusal('setup: x\nsetuptimeout: 5m\nimage: node\n'), '.svc/environment.yaml: unknown keys setuptimeout, image');
  t.regex(refusal('setup: x\nservices: [postgres]\n'), /services\.0: /);
  t.regex(refusal('setup: x\nmcp: {github: {}}\n'), /mcp: /);
  t.regex(refusal('setup: x\nmcp: null\n'), /mcp: /, 'a key given empty is still given');
  t.regex(refusal('setupTimeout: 5m\n'), /setup: a setup script, services or MCP servers: none given/);
  t.regex(refusal('mcp: [{name: a, command: [x]}]\nsetupTimeout: 5m\n'), /setupTimeout: only with a setup/);
  t.regex(refusal('mcp: [{name: a, command: [x]}]\ncacheKey: [a.lock]\n'), /cacheKey: only with a setup/);
  t.regex(refusal('setup: "   "\n'), /setup: a bash script, not blank/);
  t.regex(refusal('setup: x\nsetupTimeout: 5 minutes\n'), /setupTimeout: a duration such as 30s/);
  t.regex(refusal('setup: x\nsetupTimeout: 3h\n'), /setupTimeout: between 1s and 2h/);
  t.regex(refusal('setup: x\nsetupTimeout: 0s\n'), /setupTimeout: between 1s and 2h/);
  t.regex(refusal('setup: x\ncacheKey: [../secrets]\n'), /cacheKey\.0: a repo-relative path/);
  t.regex(refusal('setup: x\ncacheKey: []\n'), /cacheKey: /);
  t.regex(refusal('setup: [\n'), /^\.svc\/environment\.yaml: not YAML: /);
  t.regex(refusal('- setup: x\n'), /a mapping with a setup script, services or MCP servers is expected/);
  t.regex(refusal(''), /a mapping with a setup script, services or MCP servers is expected/);
  t.regex(refusal('{}\n'), /setup: a setup script, services or MCP servers: none given/);
});

test('the default cache-key files: known lockfiles and requirements files', (t) => {
  for (const path of ['package-lock.json', 'yarn.lock', 'requirements.txt', 'requirements-dev.txt', 'go.sum'])
    t.true(isDefaultCacheKeyFile(path), path);
  for (const path of ['package.json', 'README.md', 'requirements.in', 'lock.yaml'])
    t.false(isDefaultCacheKeyFile(path), path);
});

test('services: each as a run starts it, with its readiness and bound', (t) => {
  const read = parseEnvironment(
    [
      'setup: "true"',
      'services:',
      '  - {name: db, image: pg, env: {PGDATA: /tmp/pg}, ports: [5432]}',
      '  - {name: cache, image: kv, command: [kv, --port, "6400"], readiness: {command: [kv-ping], timeout: 2m}}',
      '  - {name: mock, image: m}',
      '',
    ].join('\n'),
  );
  t.deepEqual('plan' in read && read.plan.services, [
    {
      name: 'db',
      image: 'pg',
      command: null,
      env: { PGDATA: '/tmp/pg' },
      ports: [5432],
      readiness: { tcp: 5432 },
      readyTimeoutMs: 60_000,
    },
    {
      name: 'cache',
      image: 'kv',
      command: ['kv', '--port', '6400'],
      env: {},
      ports: [],
      readiness: { command: ['kv-ping'] },
      readyTimeoutMs: 120_000,
    },
    { name: 'mock', image: 'm', command: null, env: {}, ports: [], readiness: null, readyTimeoutMs: 60_000 },
  ]);
});

test('services: every problem is named, where it is', (t) => {
  const refusal = (services: string) => {
    const read = parseEnvironment(`setup: x\nservices:\n${services}`);
    return 'invalid' in read ? read.invalid : 'accepted';
  };
  t.regex(refusal('  - {name: Db, image: pg}\n'), /services\.0\.name: a DNS label/);
  t.regex(refusal('  - {name: localhost, image: pg}\n'), /services\.0\.name: a name the sandbox uses itself/);
  t.regex(refusal('  - {name: db, image: pg}\n  - {name: db, image: pg}\n'), /services\.1\.name: db is named twice/);
  t.regex(refusal('  - {name: db, image: pg, ports: [80]}\n'), /services\.0\.ports\.0: at least 1024/);
  t.regex(
    refusal('  - {name: a, image: i, ports: [5432]}\n  - {name: b, image: i, ports: [5432]}\n'),
    /services\.1\.ports: 5432 is a's too/,
  );
  t.regex(
    refusal('  - {name: db, image: pg, ports: [5432], readiness: {tcp: 5433}}\n'),
    /5433 is not one of its ports/,
  );
  t.regex(refusal('  - {name: db, image: pg, readiness: {timeout: 11m}}\n'), /readiness\.timeout: between 1s and 10m/);
  t.regex(
    refusal('  - {name: db, image: pg, ports: [5432], readiness: {tcp: 5432, command: [x]}}\n'),
    /either tcp or command, not both/,
  );
  t.regex(refusal('  - {name: db, image: pg, env: {A: [1]}}\n'), /services\.0\.env\.A: /);
  t.regex(refusal('  - {name: db, image: pg, volumes: [/data]}\n'), /unknown key volumes/);
  t.regex(refusal(Array.from({ length: 6 }, (_, i) => `  - {name: s${i}, image: i}\n`).join('')), /services: /);
});

test("a run's limits shared with its services: the agent keeps half, never more than the run's in all", (t) => {
  t.deepEqual(runShares(2048, 0), { agent: 2048, service: 2048 });
  t.deepEqual(runShares(2048, 1), { agent: 1024, service: 1024 });
  t.deepEqual(runShares(1000, 3), { agent: 502, service: 166 });
  t.deepEqual(runShares(null, 2), { agent: null, service: null });
  for (const [limit, services] of [
    [1024, 5],
    [16, 5],
    [3, 1],
    [7, 2],
  ] as const) {
    const shares = runShares(limit, services);
    t.true(shares.agent! + shares.service! * services <= limit, `${limit} over ${services}`);
    t.true(shares.agent! >= shares.service!, `${limit} over ${services}`);
  }
});
