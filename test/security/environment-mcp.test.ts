// What a repository's MCP servers (.svc/environment.yaml `mcp`) cannot get the run to do: name a
// secret the agent does not get (of scope `setup`, or none of the project's) in a header, hand
// servers to a runtime that cannot take them, reach a remote server when the project allows no
// network, or open by a server's URL any destination but that host and port (nor a private one).
// Each refused run fails `environment_invalid` before any setup or agent, no secret's value in it.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { decideEgress } from '../../platform/network-destinations.ts';
import { agentEgressRules } from '../../sandbox/network/egress-allowlist.ts';
import { forgeStack } from '../support/forge-stack.ts';
import { runEvents, waitForRunState, type TestStack } from '../support/stack.ts';

const SETUP_VALUE = 'setup-only-registry-token-5e1d';
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
// Refused before it starts: the agent's command is never run.
writeFileSync(
  agentsFile,
  `agents:\n  - name: claude\n    runtime: claude-code\n    command: ["${resolve('node_modules/.bin/claude')}"]\n`,
);
const fixture = forgeStack({ SVC_AGENTS_FILE: agentsFile });
let svc: TestStack;

test.before(async () => {
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

const remote = (header: string) =>
  [
    'setup: echo never',
    'mcp:',
    '  - name: tracker',
    '    url: https://mcp.example.com/mcp',
    `    headers: {Authorization: "Bearer ${header}"}`,
    '',
  ].join('\n');

/** Dispatches `agent` on a repository with `environment`: the run's end and its events. */
async function refused(name: string, environment: string, agent = 'claude', before?: (project: string) => unknown) {
  fixture.environmentRepo(name, environment);
  const project = await fixture.register(name);
  await before?.(project);
  const answer = await svc.request('POST', '/runs', { body: { agent, project, prompt: 'p' } });
  if (answer.status !== 201) throw new Error(answer.text);
  const run = await waitForRunState(svc, answer.body.run.id, undefined, 60_000);
  return { run, events: await runEvents(svc, run.id) };
}

const putSecret = (project: string, name: string, value: string, scope: 'run' | 'setup') =>
  svc.request('PUT', `/projects/${project}/secrets/${name}`, { body: { value, scope } });

test.serial('a header naming a setup secret fails the run environment_invalid; its value goes nowhere', async (t) => {
  const { run, events } = await refused('mcp-setup-secret', remote('${secrets.REGISTRY_TOKEN}'), 'claude', (project) =>
    putSecret(project as string, 'REGISTRY_TOKEN', SETUP_VALUE, 'setup'),
  );
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const terminal = events.find((event) => event.payload?.type === 'result');
  t.regex(terminal?.payload.message, /\$\{secrets\.REGISTRY_TOKEN\}: a setup secret; the agent gets only run secrets/);
  t.false(events.some((event) => event.kind.startsWith('environment.') || event.kind === 'sandbox.started'));
  t.false(JSON.stringify([run, events]).includes(SETUP_VALUE));
});

test.serial('a header naming a secret the project does not have fails the run environment_invalid', async (t) => {
  const { run, events } = await refused('mcp-unknown-secret', remote('${secrets.NO_SUCH_TOKEN}'));
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const terminal = events.find((event) => event.payload?.type === 'result');
  t.regex(terminal?.payload.message, /\$\{secrets\.NO_SUCH_TOKEN\}: the project has no such secret/);
  t.false(events.some((event) => event.kind === 'sandbox.started'));
});

test.serial('servers for an agent of the command runtime fail the run environment_invalid', async (t) => {
  const { run, events } = await refused(
    'mcp-command-runtime',
    'setup: echo never\nmcp:\n  - {name: files, command: [node, server.js]}\n',
    'shell',
  );
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const terminal = events.find((event) => event.payload?.type === 'result');
  t.regex(terminal?.payload.message, /mcp: the agent's runtime \(command\) takes no MCP servers/);
});

test("a server's URL opens its host and port only, public only, and nothing when the network is none", async (t) => {
  const resolver = async (host: string) => {
    const table: Record<string, string[]> = {
      'mcp.example.com': ['93.184.216.34'],
      'other.example.com': ['93.184.216.35'],
      'inside.example.com': ['10.0.0.7'],
    };
    if (!table[host]) throw new Error(`ENOTFOUND ${host}`);
    return table[host]!;
  };
  const rules = (mcpEndpoints: string[], mode: 'restricted' | 'none' = 'restricted') =>
    agentEgressRules({
      modelEndpoints: [],
      githubApiUrl: 'https://api.github.com',
      operator: [],
      project: { mode, egress: [] },
      mcpEndpoints,
    });
  const declared = rules(['https://mcp.example.com:8443/mcp', 'https://inside.example.com/mcp']);
  t.like(await decideEgress(declared, 'mcp.example.com', 8443, resolver), { allowed: true });
  t.like(await decideEgress(declared, 'mcp.example.com', 443, resolver), { allowed: false, reason: 'not_allowlisted' });
  t.like(await decideEgress(declared, 'other.example.com', 8443, resolver), { allowed: false });
  t.like(await decideEgress(declared, 'sub.mcp.example.com', 8443, resolver), { allowed: false });
  t.like(
    await decideEgress(declared, 'inside.example.com', 443, resolver),
    { allowed: false, reason: 'non_public_address' },
    "a repository's server never opens a private address",
  );
  t.like(await decideEgress(rules(['http://10.0.0.7:8080/mcp']), '10.0.0.7', 8080, resolver), { allowed: false });
  t.like(await decideEgress(rules(['https://mcp.example.com:8443/mcp'], 'none'), 'mcp.example.com', 8443, resolver), {
    allowed: false,
  });
  t.like(await decideEgress(rules([]), 'mcp.example.com', 8443, resolver), { allowed: false }, 'no server, no rule');
});
