// The generic command runtime: the agent is any executable; the prompt arrives on stdin and in
// SVC_PROMPT; every output line becomes one run event, and stdout counts as "the model answered".
import { sandboxEnv, withSystemPrompt, type RuntimeAdapter } from './types.ts';

export const commandRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const prompt = withSystemPrompt(agent, context.prompt);
    return { argv: agent.command, cwd: context.workspacePath, env: sandboxEnv(agent, { ...context, prompt }), stdin: prompt };
  },
  costBasis: () => 'api',
  parseLine(stream, text, state) {
    if (stream === 'stdout' && text.trim()) state.modelOutput = true;
    return { kind: stream === 'stderr' ? 'log.stderr' : 'log.stdout', payload: { text } };
  },
};
