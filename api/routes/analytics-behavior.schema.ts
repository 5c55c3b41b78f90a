// The response schema of GET /analytics/behavior: what the agents of the window's runs did (event
// kinds, tools, the directories their edits touched, steering, the changes they pushed), how that
// relates to outcomes, where tokens went without a result, and sentences derived from it. Every
// list is bounded, and the scan itself: the limits are stated here and in the document.
import { z } from 'zod';
import { analyticsFilter, count, rate, steeringSide, tokenBreakdown } from './analytics.schema.ts';

/** How much GET /analytics/behavior reads and answers at most. */
export const BEHAVIOR_LIMITS = {
  /** The newest runs of the window whose events are examined. */
  runs: 5000,
  eventKinds: 40,
  tools: 25,
  directories: 25,
} as const;

/** Failed runs that had used more tokens than this are `contextWaste.costlyFailures`. */
export const COSTLY_FAILURE_TOKENS = 100_000;

/** When an insight applies (see `insights` below). */
export const INSIGHT_THRESHOLDS = {
  /** steering_effect: terminal runs each side needs, and how far apart the success rates must be. */
  steeringMinTerminal: 3,
  steeringMinDelta: 0.1,
  /** wasted_tokens: the share of every token that failed and cancelled runs used. */
  wastedShare: 0.25,
  /** low_cache_reuse: prompt tokens (input + cacheRead) needed, and the cache share under which it applies. */
  cacheMinPromptTokens: 100_000,
  lowCacheShare: 0.2,
} as const;

export const INSIGHT_CODES = [
  'no_runs',
  'scan_truncated',
  'top_tool',
  'hot_directory',
  'steering_effect',
  'wasted_tokens',
  'costly_failures',
  'low_cache_reuse',
] as const;
export type InsightCode = (typeof INSIGHT_CODES)[number];

export const EDITING_KEYS = ['edited', 'no_edits'] as const;
export const CHANGE_SIZE_KEYS = ['none', 'small', 'medium', 'large', 'unmeasured'] as const;

const N = BEHAVIOR_LIMITS;
const I = INSIGHT_THRESHOLDS;
const percent = (share: number) => `${Math.round(share * 100)}%`;

const minedBucket = z.object({
  key: z.string().describe('"__none__" for events without a value'),
  count: count,
  runs: count.describe('Scanned runs with at least one'),
  share: rate.describe('count / the total of the list (every key, not only those listed)'),
});
export type MinedBucket = z.infer<typeof minedBucket>;

const outcomeSide = <K extends readonly [string, ...string[]]>(keys: K) =>
  z.array(steeringSide.extend({ key: z.enum(keys) }));

const waste = z.object({ runs: count, tokens: count, costUsd: z.number() });

export const behaviorAnalyticsResponse = z.object({
  filter: analyticsFilter,
  mining: z.object({
    windowRuns: count.describe('Runs created in the window'),
    scannedRuns: count.describe(`The newest of them examined here, at most ${N.runs}`),
    events: count.describe('Events of the scanned runs, every kind'),
    eventKinds: count.describe('Distinct event kinds among them'),
    byKind: z.array(minedBucket).describe(`Events per kind, the ${N.eventKinds} most frequent`),
    toolCalls: count.describe('tool_use events of the scanned runs'),
    tools: z.array(minedBucket).describe(`Tool calls per tool name, the ${N.tools} most used`),
    steering: z
      .object({ messages: count, steeredRuns: count, delivered: count, unread: count, failed: count })
      .describe('Inbox messages sent to the scanned runs, by state'),
    changes: z
      .object({
        measured: count.describe('Scanned runs whose pushed branch svc measured'),
        filesChanged: count,
        insertions: count,
        deletions: count,
        avgFilesChanged: z.number().nullable(),
      })
      .describe('What the pushed branches changed (the change summary of each run)'),
  }),
  directories: z
    .array(
      z.object({
        key: z
          .string()
          .describe('Two levels inside the workspace (`api/routes`, `.` for its root) or "(outside workspace)"'),
        edits: count.describe('Edit tool calls writing a file below it'),
        files: count.describe('Distinct files written'),
        runs: count,
        share: rate.describe('edits / every edit tool call with a path'),
      }),
    )
    .describe(
      `The ${N.directories} directories the agents' edit tools (Edit, MultiEdit, Write, NotebookEdit; ` +
        'OpenCode edit, write, patch) wrote to most; Codex reports shell commands only, so its edits are not counted',
    ),
  outcomes: z
    .object({
      bySteering: outcomeSide(['steered', 'unsteered'] as const).describe('Steered: sent at least one inbox message'),
      byEditing: outcomeSide(EDITING_KEYS).describe('Whether the agent called an edit tool at all'),
      byChangeSize: outcomeSide(CHANGE_SIZE_KEYS).describe(
        'Files changed on the pushed branch: none 0, small 1–5, medium 6–20, large more; unmeasured: nothing pushed',
      ),
    })
    .describe('Success and merge rates of the scanned runs, side by side; every key listed, in this order'),
  contextWaste: z
    .object({
      tokens: tokenBreakdown.describe('Every token of the scanned runs'),
      cacheReadShare: rate.describe('cacheRead / (input + cacheRead): prompt tokens served from the cache'),
      failedOrCancelled: waste
        .extend({ tokenShare: rate.describe('Their tokens / every token') })
        .describe('Spend that delivered nothing: failed and cancelled runs'),
      costlyFailures: waste
        .extend({ thresholdTokens: count })
        .describe(`Failed runs that had used more than thresholdTokens (${COSTLY_FAILURE_TOKENS}) tokens`),
      byFailureReason: z
        .array(waste.extend({ key: z.string() }))
        .describe('Failed runs per reason with their tokens and USD, most tokens first'),
    })
    .describe('Where tokens went without a result'),
  insights: z
    .array(
      z.object({
        code: z.enum(INSIGHT_CODES),
        severity: z.enum(['info', 'warning']),
        message: z.string().describe('One sentence, for people'),
        value: z.number().nullable().describe('The number the sentence is about (a share, a count, a difference)'),
      }),
    )
    .describe(
      'Derived from the numbers above, each only when it applies, in this order: no_runs (then nothing else); ' +
        'scan_truncated; top_tool; hot_directory; steering_effect (success rates ' +
        `${percent(I.steeringMinDelta)}+ apart, ${I.steeringMinTerminal}+ terminal runs a side); wasted_tokens ` +
        `(failed and cancelled runs used ${percent(I.wastedShare)}+ of the tokens); costly_failures; ` +
        `low_cache_reuse (under ${percent(I.lowCacheShare)} of ${I.cacheMinPromptTokens}+ prompt tokens ` +
        'from the cache)',
    ),
  truncated: z
    .boolean()
    .describe(`The window had more than ${N.runs} runs: everything above covers the newest ${N.runs}`),
});
export type BehaviorAnalytics = z.infer<typeof behaviorAnalyticsResponse>;
export type BehaviorInsight = BehaviorAnalytics['insights'][number];
