// `svc doctor --local`, the agents' half: every agent whose runtime is a CLI (claude-code, codex,
// opencode) is started with `--version` in a sandbox made as a run's is (the same toolchain, PATH,
// uid and isolation), so a CLI a run would not find fails here first, saying why. An agent of the
// `command` runtime runs the operator's own program, which `--version` may not mean: not started.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition } from '../../core/agents.ts';
import { AgentCatalog } from '../../platform/agent-catalog.ts';
import type { SvcConfig } from '../../platform/config.ts';
import type { Isolation } from '../../platform/sandbox-settings.ts';
import type { Finding } from './finding.ts';

/** A CLI's first start may unpack or warm caches: generous, and still an answer. */
const VERSION_TIMEOUT_MS = 60_000;
/** How much of a failed start's output a finding quotes. */
const OUTPUT_MAX = 300;

interface Outcome {
  code: number | null;
  output: string;
}

/** Runs `argv` with `env` in `cwd`; the output is stdout and stderr together, trimmed. */
function run(argv: string[], env: Record<string, string>, cwd: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => (output += chunk.toString());
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      output += `\nno answer within ${VERSION_TIMEOUT_MS / 1000}s`;
      child.kill('SIGKILL');
    }, VERSION_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.trim() });
    });
  });
}

/** `<command> --version` in a throw-away sandbox of `isolation`. */
async function versionInSandbox(agent: AgentDefinition, config: SvcConfig, isolation: Isolation): Promise<Outcome> {
  const { sandboxFiles, sandboxHostId, sandboxLaunch } = await import('../../sandbox/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  try {
    const hostId = sandboxHostId(`doctor-${agent.name}`, config.sandbox);
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace, { mode: 0o700 });
    if (hostId !== null) chownSync(workspace, hostId, hostId);
    const { spec } = sandboxLaunch({
      name: `doctor-${agent.name}`,
      dir: join(dir, 'sandbox'),
      launch: {
        argv: [...agent.command, '--version'],
        cwd: workspace,
        env: { ...(process.env.PATH ? { PATH: process.env.PATH } : {}), ...agent.env },
        stdin: null,
      },
      isolation,
      settings: config.sandbox,
      hostId,
      egress: [],
      callback: null,
      dieWithParent: true,
      forbidden: [config.dataDir, config.projectsRoot],
      trustCommand: agent.source !== 'project',
    });
    // Where a supervisor would serve the sandbox's proxies: `--version` needs no network.
    mkdirSync(sandboxFiles(join(dir, 'sandbox')).net, { recursive: true, mode: 0o755 });
    return await run(spec.argv, spec.env, spec.cwd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last lines of a failed start, where the reason is. */
function why(output: string): string {
  const text = output.replace(/\s+/g, ' ').trim();
  return text.length > OUTPUT_MAX ? `…${text.slice(-OUTPUT_MAX)}` : text || 'no output';
}

async function agentCheck(agent: AgentDefinition, config: SvcConfig, isolation: Isolation): Promise<Finding> {
  const name = `agent:${agent.name}`;
  const command = agent.command.join(' ');
  let outcome: Outcome;
  try {
    outcome = await versionInSandbox(agent, config, isolation);
  } catch (error) {
    return { name, level: 'fail', message: `could not make its sandbox: ${(error as Error).message}` };
  }
  if (outcome.code === 0)
    return { name, level: 'ok', detail: `${command} --version in a ${isolation} sandbox: ${why(outcome.output)}` };
  const missing = outcome.code === 127 || /ENOENT/.test(outcome.output);
  return {
    name,
    level: 'fail',
    message: `\`${command} --version\` in a ${isolation} sandbox ${
      missing ? 'found no such command' : `ended with ${outcome.code ?? 'no exit code'}`
    }: ${why(outcome.output)}`,
    hint: missing
      ? `runs cannot start it: reinstall svc's packages (scripts/svc installs them), or fix its command in ${
          agent.source === 'builtin' ? 'SVC_AGENTS_FILE' : 'its definition'
        }`
      : 'runs of this agent would fail the same way',
  };
}

/** One finding per agent with a CLI runtime, each as soon as it is known. */
export async function* agentChecks(config: SvcConfig): AsyncGenerator<Finding> {
  let agents: AgentDefinition[];
  try {
    agents = AgentCatalog.load(config.agentsFile)
      .list()
      .filter((agent) => agent.runtime !== 'command');
  } catch {
    return; // the `agents` check says why
  }
  if (['container', 'kubernetes'].includes(config.sandbox.mode)) {
    for (const agent of agents)
      yield {
        name: `agent:${agent.name}`,
        level: 'warn',
        message: `not started: with SVC_SANDBOX=${config.sandbox.mode} its CLI is the agent image's`,
        hint: 'scripts/build-agent-image puts the built-in agents in the default image',
      };
    return;
  }
  const { chooseIsolation } = await import('../../sandbox/index.ts');
  let isolation: Isolation;
  try {
    isolation = chooseIsolation(config.sandbox);
  } catch (error) {
    for (const agent of agents)
      yield { name: `agent:${agent.name}`, level: 'fail', message: `no sandbox: ${(error as Error).message}` };
    return;
  }
  for (const agent of agents) yield await agentCheck(agent, config, isolation);
}
