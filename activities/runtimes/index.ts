import type { RuntimeId } from '../../core/agents.ts';
import { acpRuntime } from './acp.ts';
import { claudeCodeRuntime } from './claude-code.ts';
import { codexRuntime } from './codex.ts';
import { commandRuntime } from './command.ts';
import { openCodeRuntime } from './opencode.ts';
import type { RuntimeAdapter } from './types.ts';

const ADAPTERS: Record<RuntimeId, RuntimeAdapter> = {
  command: commandRuntime,
  'claude-code': claudeCodeRuntime,
  codex: codexRuntime,
  opencode: openCodeRuntime,
  acp: acpRuntime,
};

export function runtimeFor(id: RuntimeId): RuntimeAdapter {
  return ADAPTERS[id];
}
