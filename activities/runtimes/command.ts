// The generic command runtime: the agent is any executable; the prompt arrives on stdin and in
// SVC_PROMPT; every output line becomes one run event, and stdout counts as "the model answered".
// A command reports what it spent by printing `{"type":"svc.usage","costUsd":…,"tokensInput":…}`
// lines with cumulative figures; the last one is the run's usage (and is checked against its cap).
// A `"model"` in such a line names the model the command ran (the run's model from then on).
// `{"type":"svc.provider_error","message":…}` says the model provider failed (provider_error).
import { noteReportedModel, sandboxEnv, withSystemPrompt, type RuntimeAdapter, type Usage } from './types.ts';

const USAGE_FIELDS = ['costUsd', 'tokensInput', 'tokensOutput', 'tokensCacheRead', 'tokensCacheWrite'] as const;

function usageReport(text: string): { usage: Usage; model: unknown } | null {
  if (!text.startsWith('{') || !text.includes('svc.usage')) return null;
  try {
    const line = JSON.parse(text) as Record<string, unknown>;
    if (line.type !== 'svc.usage') return null;
    const number = (value: unknown) =>
      typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
    const usage = Object.fromEntries(USAGE_FIELDS.map((field) => [field, number(line[field])])) as unknown as Usage;
    return { usage, model: line.model };
  } catch {
    return null;
  }
}

function providerErrorReport(text: string): string | null {
  if (!text.startsWith('{') || !text.includes('svc.provider_error')) return null;
  try {
    const line = JSON.parse(text) as Record<string, unknown>;
    return line.type === 'svc.provider_error' ? String(line.message ?? 'the model provider failed') : null;
  } catch {
    return null;
  }
}

export const commandRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const prompt = withSystemPrompt(agent, context.prompt);
    return {
      argv: agent.command,
      cwd: context.workspacePath,
      env: sandboxEnv(agent, { ...context, prompt }),
      stdin: prompt,
    };
  },
  costBasis: () => 'api',
  modelEndpoints: () => [],
  parseLine(stream, text, state) {
    const providerError = stream === 'stdout' ? providerErrorReport(text.trim()) : null;
    if (providerError !== null) {
      state.providerError = providerError;
      return { kind: 'agent.provider_error', payload: { message: providerError } };
    }
    const report = stream === 'stdout' ? usageReport(text.trim()) : null;
    if (report) {
      state.usage = report.usage;
      noteReportedModel(state, report.model);
      return { kind: 'usage', payload: state.model ? { ...report.usage, model: state.model } : report.usage };
    }
    if (stream === 'stdout' && text.trim()) state.modelOutput = true;
    return { kind: stream === 'stderr' ? 'log.stderr' : 'log.stdout', payload: { text } };
  },
};
