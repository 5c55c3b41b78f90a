// Search attributes that let an operator find any run or plan-run in the Temporal UI. Registered
// by temporal-dev.yml for the embedded server and at start-up for an external cluster.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SvcKind = defineSearchAttributeKey('SvcKind', SearchAttributeType.KEYWORD);
export const SvcProjectId = defineSearchAttributeKey('SvcProjectId', SearchAttributeType.KEYWORD);
export const SvcAgent = defineSearchAttributeKey('SvcAgent', SearchAttributeType.KEYWORD);
export const SvcState = defineSearchAttributeKey('SvcState', SearchAttributeType.KEYWORD);
export const SvcPlanId = defineSearchAttributeKey('SvcPlanId', SearchAttributeType.KEYWORD);
export const SvcSeedId = defineSearchAttributeKey('SvcSeedId', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [SvcKind, SvcProjectId, SvcAgent, SvcState, SvcPlanId, SvcSeedId];

/** The search attributes a run starts with, wherever it is started from. */
export function runSearchAttributes(input: {
  agent: { name: string };
  projectId: string | null;
  seedId: string | null;
}) {
  return [
    { key: SvcKind, value: 'run' },
    { key: SvcAgent, value: input.agent.name },
    { key: SvcState, value: 'queued' },
    ...(input.projectId ? [{ key: SvcProjectId, value: input.projectId }] : []),
    ...(input.seedId ? [{ key: SvcSeedId, value: input.seedId }] : []),
  ];
}
