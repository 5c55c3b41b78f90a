// The seeds tracker's files, read directly: `.seeds/issues.jsonl` and `.seeds/plans.jsonl`. One
// JSON object per line; the last line for an id wins; malformed lines are skipped; ids are opaque.

export type SeedStatus = 'open' | 'closed' | 'other';

export interface Seed {
  id: string;
  title: string;
  status: SeedStatus;
  rawStatus: string;
  description: string;
  blockedBy: string[];
}

export interface Plan {
  id: string;
  status: string;
  seed?: string;
  template?: string;
  revision?: number;
  name?: string;
  children: string[];
  createdAt?: string;
  updatedAt?: string;
}

export interface JsonlRead<T> {
  records: Map<string, T>;
  skippedLines: number;
}

function readJsonl<T>(text: string, toRecord: (value: Record<string, unknown>) => T | undefined): JsonlRead<T> {
  const records = new Map<string, T>();
  let skippedLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skippedLines += 1;
      continue;
    }
    if (
      !value ||
      typeof value !== 'object' ||
      Array.isArray(value) ||
      typeof (value as { id?: unknown }).id !== 'string' ||
      !(value as { id: string }).id
    ) {
      skippedLines += 1;
      continue;
    }
    const record = toRecord(value as Record<string, unknown>);
    if (record === undefined) {
      skippedLines += 1;
      continue;
    }
    const id = (value as { id: string }).id;
    records.delete(id); // keep file order of the winning line
    records.set(id, record);
  }
  return { records, skippedLines };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

export function normaliseSeedStatus(status: unknown): SeedStatus {
  if (status === 'open' || status === 'in_progress') return 'open';
  if (status === 'closed') return 'closed';
  return 'other';
}

export function parseIssues(text: string): JsonlRead<Seed> {
  return readJsonl(text, (value) => ({
    id: value.id as string,
    title: typeof value.title === 'string' ? value.title : '',
    status: normaliseSeedStatus(value.status),
    rawStatus: typeof value.status === 'string' ? value.status : 'unknown',
    description: typeof value.description === 'string' ? value.description : '',
    blockedBy: strings(value.blockedBy),
  }));
}

export function parsePlans(text: string): JsonlRead<Plan> {
  return readJsonl(text, (value) => ({
    id: value.id as string,
    status: typeof value.status === 'string' ? value.status : 'unknown',
    ...(typeof value.seed === 'string' ? { seed: value.seed } : {}),
    ...(typeof value.template === 'string' ? { template: value.template } : {}),
    ...(Number.isInteger(value.revision) ? { revision: value.revision as number } : {}),
    ...(typeof value.name === 'string' ? { name: value.name } : {}),
    children: strings(value.children),
    ...(typeof value.createdAt === 'string' ? { createdAt: value.createdAt } : {}),
    ...(typeof value.updatedAt === 'string' ? { updatedAt: value.updatedAt } : {}),
  }));
}

/** Open, and every blocker closed (an unknown blocker counts as open). */
export function isReady(seed: Seed, issues: Map<string, Seed>): boolean {
  return seed.status === 'open' && seed.blockedBy.every((id) => issues.get(id)?.status === 'closed');
}

/** A child that is not known to be closed counts as open. */
export function openChildCount(plan: Plan, issues: Map<string, Seed>): number {
  return plan.children.filter((id) => issues.get(id)?.status !== 'closed').length;
}

/**
 * Plans that can be dispatched: approved, with at least one open child, and never dispatched
 * before in this project.
 */
export function readyPlans(plans: Map<string, Plan>, issues: Map<string, Seed>, dispatchedPlanIds: Set<string>) {
  return [...plans.values()]
    .filter((plan) => plan.status === 'approved' && !dispatchedPlanIds.has(plan.id))
    .map((plan) => ({
      id: plan.id,
      ...(plan.name ? { name: plan.name } : {}),
      status: plan.status,
      openChildCount: openChildCount(plan, issues),
    }))
    .filter((plan) => plan.openChildCount > 0);
}
