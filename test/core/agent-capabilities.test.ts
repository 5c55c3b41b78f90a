// What each runtime can do: how its agents are steered when their definition says nothing, and
// when the cost an agent reports is an estimate.
import test from 'ava';
import { agentSteering, runtimeCostBasis } from '../../core/agent-capabilities.ts';

test("an agent's steering: its definition's, else its runtime's way in while it works", (t) => {
  t.is(agentSteering({ runtime: 'claude-code', steering: null }), 'mid-run');
  t.is(agentSteering({ runtime: 'acp', steering: null }), 'mid-run');
  t.is(agentSteering({ runtime: 'codex', steering: null }), 'spawn-only');
  t.is(agentSteering({ runtime: 'command', steering: null }), 'spawn-only');
  // A command agent that reads its inbox itself says so; any agent may refuse steering.
  t.is(agentSteering({ runtime: 'command', steering: 'mid-run' }), 'mid-run');
  t.is(agentSteering({ runtime: 'acp', steering: 'none' }), 'none');
  t.is(agentSteering({ runtime: 'claude-code', steering: 'spawn-only' }), 'spawn-only');
});

test("Claude Code's cost is an estimate on a subscription credential without an API key", (t) => {
  t.is(runtimeCostBasis('claude-code', { CLAUDE_CODE_OAUTH_TOKEN: 'x' }), 'subscription_estimate');
  t.is(runtimeCostBasis('claude-code', { CLAUDE_CODE_OAUTH_TOKEN: 'x', ANTHROPIC_API_KEY: 'y' }), 'api');
  t.is(runtimeCostBasis('codex', { CLAUDE_CODE_OAUTH_TOKEN: 'x' }), 'api');
});
