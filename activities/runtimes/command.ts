// The generic command runtime: the agent is any executable; the prompt arrives on stdin and in
// SVC_PROMPT; every output line becomes one run event.
import type { AgentDefinition } from '../../core/agents.ts';
import type { EventStream } from '../../core/run-states.ts';
import type { LaunchSpec } from '../sandbox/files.ts';

/** Host variables an agent may see; nothing else of the service's environment (tokens, DB URLs) leaks in. */
// The host's git configuration files are passed on (url rewrites for mirrors, CA settings): they
// hold no credential of svc's.
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'SHELL', 'TZ', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM'];

export interface LaunchContext {
  runId: string;
  prompt: string;
  workspacePath: string;
  hostEnv: NodeJS.ProcessEnv;
}

export function buildCommandLaunch(agent: AgentDefinition, context: LaunchContext): LaunchSpec {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = context.hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  const prompt = agent.systemPrompt ? `${agent.systemPrompt}\n\n${context.prompt}` : context.prompt;
  Object.assign(env, agent.env, { SVC_RUN_ID: context.runId, SVC_PROMPT: prompt, SVC_WORKSPACE: context.workspacePath });
  if (agent.model) env.SVC_MODEL = agent.model;
  if (agent.provider) env.SVC_PROVIDER = agent.provider;
  return { argv: agent.command, cwd: context.workspacePath, env, stdin: prompt };
}

export interface ParsedOutput {
  kind: string;
  payload: unknown;
}

export function parseCommandOutput(stream: EventStream, text: string): ParsedOutput {
  return { kind: stream === 'stderr' ? 'log.stderr' : 'log.stdout', payload: { text } };
}
