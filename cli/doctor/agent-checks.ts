// `svc doctor --local`, the agents' half: every agent whose runtime is a CLI (claude-code, codex,
// opencode) is started with `--version` in a sandbox made and started as a run's is (the same
// toolchain, PATH, uid and backend: bubblewrap, a container of the agent image, a pod), so a CLI a
// run would not find fails here first, saying why. An agent of the
// `command` runtime runs the operator's own program, which `--version` may not mean: not started.
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition } from '../../core/agents.ts';
import { AgentCatalog } from '../../platform/agent-catalog.ts';
import type { SvcConfig } from '../../platform/config.ts';
import type { Isolation } from '../../platform/sandbox-settings.ts';
import type { ProbeOutcome } from '../../sandbox/index.ts';
import type { Finding } from './finding.ts';

/** A CLI's first start may unpack or warm caches, a pod wait for its node: generous, and still an answer. */
const VERSION_TIMEOUT_MS = 60_000;
/** How much of a failed start's output a finding quotes. */
const OUTPUT_MAX = 300;

/** `<command> --version` in a throw-away sandbox of `isolation`, started as a run's agent is. */
async function versionInSandbox(
  agent: AgentDefinition,
  config: SvcConfig,
  isolation: Isolation,
): Promise<ProbeOutcome> {
  const { engineFacts, probeInSandbox, sandboxHostId } = await import('../../sandbox/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  try {
    const name = `doctor-${agent.name}-${process.pid}`;
    const hostId = sandboxHostId(name, config.sandbox);
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace, { mode: 0o700 });
    if (hostId !== null) chownSync(workspace, hostId, hostId);
    return await probeInSandbox(
      {
        name,
        dir: join(dir, 'sandbox'),
        launch: {
          argv: [...agent.command, '--version'],
          cwd: workspace,
          env: { ...(process.env.PATH ? { PATH: process.env.PATH } : {}), ...agent.env },
          stdin: null,
        },
        isolation,
        settings: config.sandbox,
        engineFacts:
          isolation === 'container' ? await engineFacts(config.sandbox.container.engine).catch(() => null) : null,
        hostId,
        egress: [],
        callback: null,
        dieWithParent: false,
        forbidden: [config.dataDir, config.projectsRoot],
        trustCommand: agent.source !== 'project',
      },
      VERSION_TIMEOUT_MS,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last lines of a failed start, where the reason is. */
function why(output: string): string {
  const text = output.replace(/\s+/g, ' ').trim();
  return text.length > OUTPUT_MAX ? `…${text.slice(-OUTPUT_MAX)}` : text || 'no output';
}

/** Where a command a run cannot find comes from: svc's install, or the agent image. */
function missingHint(agent: AgentDefinition, isolation: Isolation): string {
  const fix = `or fix its command in ${agent.source === 'builtin' ? 'SVC_AGENTS_FILE' : 'its definition'}`;
  return isolation === 'container' || isolation === 'kubernetes'
    ? 'runs cannot start it: the agent image must hold it (scripts/build-agent-image puts the built-in agents ' +
        `in the default one), ${fix}`
    : `runs cannot start it: reinstall svc's packages (scripts/svc installs them), ${fix}`;
}

async function agentCheck(agent: AgentDefinition, config: SvcConfig, isolation: Isolation): Promise<Finding> {
  const name = `agent:${agent.name}`;
  const command = agent.command.join(' ');
  let outcome: ProbeOutcome;
  try {
    outcome = await versionInSandbox(agent, config, isolation);
  } catch (error) {
    return { name, level: 'fail', message: `could not make its sandbox: ${(error as Error).message}` };
  }
  if (outcome.code === 0)
    return { name, level: 'ok', detail: `${command} --version in a ${isolation} sandbox: ${why(outcome.output)}` };
  const { missing } = outcome;
  return {
    name,
    level: 'fail',
    message: `\`${command} --version\` in a ${isolation} sandbox ${
      missing ? 'found no such command' : `ended with ${outcome.code ?? 'no exit code'}`
    }: ${why(outcome.output)}`,
    hint: missing ? missingHint(agent, isolation) : 'runs of this agent would fail the same way',
  };
}

/** Why a container or pod cannot be started to ask (the backend's own check says more), or null. */
async function backendRefusal(config: SvcConfig): Promise<string | null> {
  const { containerBackendReady, kubernetesBackendReady } = await import('../../sandbox/index.ts');
  try {
    if (config.sandbox.mode === 'container') await containerBackendReady(config.sandbox.container);
    else if (config.sandbox.mode === 'kubernetes') await kubernetesBackendReady(config.sandbox.kubernetes);
    return null;
  } catch {
    return `SVC_SANDBOX=${config.sandbox.mode} cannot start a sandbox (${
      config.sandbox.mode === 'container' ? 'container_engine' : 'kubernetes_api'
    } says why)`;
  }
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
  const backend = await backendRefusal(config);
  if (backend) {
    for (const agent of agents)
      yield { name: `agent:${agent.name}`, level: 'warn', message: `not started: ${backend}` };
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
