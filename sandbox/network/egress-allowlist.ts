// Whom an agent's sandbox may reach, composed per run: its runtime's model endpoints always; then,
// unless the project says `resources.network: none`, the forge, the operator's SVC_SANDBOX_EGRESS
// and the project's own `resources.egress` and its environment's remote MCP servers (public
// destinations only); `open` adds every public destination. An entry that repeats an earlier one is
// merged into it. svc's own API is not on it: the sandbox reaches only its run's callback routes,
// through the callback proxy.
import { egressRuleForUrl, mergeEgressRules, parseEgressEntry, type EgressRule } from '../../core/egress-rules.ts';
import type { SandboxNetworkSettings } from '../../core/run-model.ts';

export interface AllowlistInput {
  modelEndpoints: string[];
  githubApiUrl: string;
  operator: EgressRule[];
  project: SandboxNetworkSettings | null | undefined;
  /**
   * The remote MCP servers of the run's environment (core/mcp-servers.ts): each URL's host and port,
   * as a project's entry (public destinations only), unless the project allows no network.
   */
  mcpEndpoints?: string[];
}

/** GitHub's web and content hosts: clones and downloads of public code, never a credential. */
const FORGE_HOSTS = ['github.com', '*.githubusercontent.com'];

export function agentEgressRules(input: AllowlistInput): EgressRule[] {
  const rules = input.modelEndpoints.map((url) => egressRuleForUrl(url, 'builtin'));
  const mode = input.project?.mode ?? 'restricted';
  if (mode === 'none') return mergeEgressRules(rules);
  rules.push(
    ...FORGE_HOSTS.map((host) => parseEgressEntry(host, 'builtin')),
    egressRuleForUrl(input.githubApiUrl, 'builtin'),
    ...input.operator,
  );
  for (const entry of input.project?.egress ?? []) {
    try {
      rules.push(parseEgressEntry(entry, 'project'));
    } catch {
      // validated when the project's config was read; a stale bad entry opens nothing
    }
  }
  for (const url of input.mcpEndpoints ?? []) rules.push(egressRuleForUrl(url, 'project'));
  if (mode === 'open') rules.push({ host: '*', ports: '*', source: 'project' });
  return mergeEgressRules(rules);
}
