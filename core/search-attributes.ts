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
