// The egress decision on its own, with a resolver the test controls: what a hostile agent (or a
// hostile DNS answer) cannot make the proxy connect to.
import test from 'ava';
import {
  EgressEntryError,
  matchEgressRule,
  parseEgressEntry,
  parseEgressList,
  type EgressRule,
} from '../../core/egress-rules.ts';
import { networkInterfaces } from 'node:os';
import { decideEgress, isPublicAddress } from '../../platform/network-destinations.ts';
import { agentEgressRules } from '../../sandbox/network/egress-allowlist.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxLaunch, SANDBOX_PROGRAMS } from '../../sandbox/host/sandbox-launch.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';

const answers = (table: Record<string, string[]>) => async (host: string) => {
  if (!table[host]) throw new Error(`ENOTFOUND ${host}`);
  return table[host]!;
};

test('entries parse to host and ports; bad ones are refused with the entry named', (t) => {
  t.like(parseEgressEntry('API.example.com', 'operator'), { host: 'api.example.com', ports: [80, 443] });
  t.like(parseEgressEntry('*.npmjs.org:443', 'operator'), { host: '*.npmjs.org', ports: [443] });
  t.like(parseEgressEntry('[::1]:8080', 'operator'), { host: '::1', ports: [8080] });
  t.like(parseEgressEntry('mirror.internal:*', 'operator'), { host: 'mirror.internal', ports: '*' });
  for (const bad of ['', 'http://x.com', 'a b', 'x.com:0', 'x.com:99999', '::1:80', '[::1', 'exa_mple..com']) {
    t.throws(() => parseEgressEntry(bad, 'operator'), { instanceOf: EgressEntryError }, bad);
  }
  t.is(parseEgressList('a.com, b.com:8443  c.com', 'operator').length, 3);
});

test('a wildcard matches subdomains only, never the bare suffix or a look-alike', (t) => {
  const rules = parseEgressList('*.example.com:443', 'operator');
  t.truthy(matchEgressRule(rules, 'api.example.com', 443));
  t.falsy(matchEgressRule(rules, 'example.com', 443));
  t.falsy(matchEgressRule(rules, 'evilexample.com', 443));
  t.falsy(matchEgressRule(rules, 'api.example.com', 80));
});

test('public hosts pass; a name with a private address is refused unless an operator entry names it', async (t) => {
  const resolver = answers({
    'api.example.com': ['93.184.216.34'],
    'rebound.example.com': ['93.184.216.34', '127.0.0.1'],
    'mirror.internal': ['10.0.0.7'],
    'sneaky.example.com': ['::ffff:10.0.0.7'],
  });
  const rules: EgressRule[] = [
    ...parseEgressList('*.example.com', 'operator'),
    ...parseEgressList('mirror.internal', 'operator'),
  ];
  t.like(await decideEgress(rules, 'api.example.com', 443, resolver), { allowed: true, address: '93.184.216.34' });
  t.like(
    await decideEgress(rules, 'rebound.example.com', 443, resolver),
    { allowed: false, reason: 'non_public_address' },
    'one private answer refuses the name',
  );
  t.like(
    await decideEgress(rules, 'sneaky.example.com', 443, resolver),
    { allowed: false, reason: 'non_public_address' },
    'an IPv4-mapped private address is private',
  );
  t.like(
    await decideEgress(rules, 'mirror.internal', 443, resolver),
    { allowed: true, address: '10.0.0.7' },
    'the operator named it exactly',
  );
  t.like(await decideEgress(rules, 'unknown.example.com', 443, resolver), { allowed: false, reason: 'unresolvable' });
  t.like(await decideEgress(rules, 'elsewhere.org', 443, resolver), { allowed: false, reason: 'not_allowlisted' });
});

test('a project opens public hosts only; cloud metadata opens only to its exact IP from the operator', async (t) => {
  const resolver = answers({ 'db.example.com': ['10.0.0.5'], 'metadata.example.com': ['169.254.169.254'] });
  const project = parseEgressList('db.example.com:5432 127.0.0.1:5432 169.254.169.254:80', 'project');
  t.like(await decideEgress(project, 'db.example.com', 5432, resolver), {
    allowed: false,
    reason: 'non_public_address',
  });
  t.like(await decideEgress(project, '127.0.0.1', 5432, resolver), { allowed: false, reason: 'non_public_address' });
  t.like(await decideEgress(project, '169.254.169.254', 80, resolver), {
    allowed: false,
    reason: 'link_local_address',
  });
  const operatorByName = parseEgressList('metadata.example.com:80', 'operator');
  t.like(await decideEgress(operatorByName, 'metadata.example.com', 80, resolver), {
    allowed: false,
    reason: 'link_local_address',
  });
  const operatorByIp = parseEgressList('169.254.169.254:80', 'operator');
  t.like(await decideEgress(operatorByIp, '169.254.169.254', 80, resolver), { allowed: true });
  const open = agentEgressRules({
    modelEndpoints: [],
    githubApiUrl: 'https://api.github.com',
    operator: [],
    project: { mode: 'open', egress: [] },
  });
  t.like(
    await decideEgress(open, 'db.example.com', 5432, resolver),
    { allowed: false, reason: 'non_public_address' },
    '"open" means any public host',
  );
});

test("a run's allowlist: model endpoints always; forge, operator, project entries unless network: none", (t) => {
  const base = {
    modelEndpoints: ['http://127.0.0.1:4000'],
    githubApiUrl: 'https://api.github.com',
    operator: parseEgressList('registry.npmjs.org', 'operator'),
  };
  const none = agentEgressRules({ ...base, project: { mode: 'none', egress: ['pypi.org'] } });
  t.deepEqual(
    none.map((rule) => rule.host),
    ['127.0.0.1'],
  );
  const restricted = agentEgressRules({ ...base, project: { mode: 'restricted', egress: ['pypi.org'] } });
  t.deepEqual(
    restricted.map((rule) => rule.host),
    ['127.0.0.1', 'github.com', '*.githubusercontent.com', 'api.github.com', 'registry.npmjs.org', 'pypi.org'],
  );
  t.is(restricted.find((rule) => rule.host === 'pypi.org')?.source, 'project');
});

test('an entry that repeats an earlier one is merged into it: the first, more trusted, is kept', (t) => {
  const rules = agentEgressRules({
    modelEndpoints: ['http://127.0.0.1:4000', 'http://localhost:4001'],
    githubApiUrl: 'https://api.github.com',
    operator: parseEgressList(
      '127.0.0.1:4000 localhost:4001,localhost:4002 github.com api.github.com:443,[::1]:4000',
      'operator',
    ),
    project: { mode: 'restricted', egress: ['github.com:443', 'pypi.org', 'pypi.org:443'] },
  });
  t.deepEqual(
    rules.map((rule) => `${rule.host} ${rule.ports} ${rule.source}`),
    [
      '127.0.0.1 4000 builtin',
      'localhost 4001 builtin',
      'github.com 80,443 builtin',
      '*.githubusercontent.com 80,443 builtin',
      'api.github.com 443 builtin',
      'localhost 4002 operator',
      '::1 4000 operator',
      'pypi.org 80,443 project',
    ],
  );
});

test('a loopback endpoint named twice (a repeated entry, localhost and 127.0.0.1) is one port in the sandbox', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-egress-merge-'));
  const { spec } = sandboxLaunch({
    name: 'run_merge',
    dir,
    launch: { argv: ['true'], cwd: dir, env: {}, stdin: null },
    isolation: 'bubblewrap',
    settings: parseSandboxSettings({}),
    hostId: null,
    egress: [
      ...parseEgressList('127.0.0.1:4000', 'builtin'),
      ...parseEgressList('127.0.0.1:4000 localhost:4000 localhost:4001 [::1]:4000', 'operator'),
    ],
    callback: null,
    dieWithParent: true,
    forbidden: [],
    trustCommand: true,
  });
  const listeners = JSON.parse(spec.argv[spec.argv.lastIndexOf(SANDBOX_PROGRAMS.init.target) + 1]!) as {
    host: string;
    port: number;
    connect?: string;
  }[];
  const forwarded = listeners.filter((listener) => listener.connect);
  t.deepEqual(
    forwarded.map((listener) => `${listener.host}:${listener.port} → ${listener.connect}`),
    ['127.0.0.1:4000 → 127.0.0.1:4000', '127.0.0.1:4001 → localhost:4001', '::1:4000 → [::1]:4000'],
  );
  const addresses = listeners.map((listener) => `${listener.host}:${listener.port}`);
  t.is(new Set(addresses).size, addresses.length, 'no two listeners on one address');
});

test('the address classes', (t) => {
  for (const address of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
  ])
    t.false(isPublicAddress(address), address);
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) t.true(isPublicAddress(address), address);
  for (const address of ['::a00:1', '2002:a00:1::1', '64:ff9b:1::a00:1'])
    t.false(isPublicAddress(address), `${address} embeds a private IPv4 address`);
  // However public the host's own addresses are, they lead to whatever listens on all interfaces.
  for (const entry of Object.values(networkInterfaces()).flat())
    if (entry) t.false(isPublicAddress(entry.address.replace(/%.*$/, '')), entry.address);
});
