// The schemas of a project's `.svc/` policy files (config.yaml, triggers.yaml, preview.yaml):
// strict zod schemas whose inferred types are the settings svc reads. Loading, problems and
// scaffolding are in svc-config.ts.
import { z } from 'zod';
import { parseEgressEntry } from './egress-rules.ts';
import { FIELD_LIMITS } from './field-limits.ts';
import { ALERT_SOURCES, ruleSpecificity } from './healer.ts';

/** The longest `repoContext`: context for every prompt, not a document. */
export const REPO_CONTEXT_MAX = 8192;

/**
 * A key the interface names that svc does not act on: refused with why, since a key accepted and
 * ignored would let a project believe it is in force.
 */
export const refusedKey = (message: string) =>
  z
    .unknown()
    .optional()
    .superRefine((value, context) => {
      if (value !== undefined) context.addIssue({ code: 'custom', message });
    });

/** A name stored in a column of its own (agents, branches, seeds): bounded like the column. */
const name = z.string().min(1).max(FIELD_LIMITS.name);

const DURATION = /^(\d+h)?(\d+m)?(\d+s)?$/;
/** A duration such as 30s, 5m or 1h30m (the `.svc/` files' one shape for one). */
export const duration = z
  .string()
  // Aborts: a refinement after it (a range) may read the value as a duration.
  .refine((value) => value !== '' && DURATION.test(value), {
    message: 'a duration such as 30s, 5m or 1h30m',
    abort: true,
  });

/** A Kubernetes label value or name: at most 63 characters of [A-Za-z0-9._-], or empty. */
const labelValue = z
  .string()
  .regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/)
  .max(63);
/** A DNS-1123 name (a Secret's, a service account's). */
const dnsName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
  .max(253);

/**
 * The project's pod settings (Kubernetes backend, svc's own key): where its pods may be scheduled,
 * and — only among what the operator allows projects (SVC_KUBERNETES_POD_DEFAULTS) — a service
 * account and environment from Secrets by reference.
 */
export const projectPodSettings = z
  .object({
    nodeSelector: z.record(z.string().min(1).max(317), labelValue).optional(),
    tolerations: z
      .array(
        z
          .object({
            key: z.string().max(317).optional(),
            operator: z.enum(['Exists', 'Equal']).optional(),
            value: labelValue.optional(),
            effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
            tolerationSeconds: z.number().int().min(0).optional(),
          })
          .strict(),
      )
      .max(20)
      .optional(),
    serviceAccountName: dnsName.optional(),
    secretEnv: z
      .array(
        z
          .object({
            name: z
              .string()
              .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
              .max(128),
            secret: dnsName,
            key: z.string().min(1).max(253),
          })
          .strict(),
      )
      .max(50)
      .optional(),
  })
  .strict();

export function durationSeconds(value: string): number {
  const match = DURATION.exec(value)!;
  return (parseInt(match[1] ?? '0', 10) * 60 + parseInt(match[2] ?? '0', 10)) * 60 + parseInt(match[3] ?? '0', 10);
}

/** A source project name (Sentry project slug, Grafana `project`/`service` label). */
const sourceProjectName = z
  .string()
  .max(200)
  .refine((value) => value.trim() !== '', 'a source project name, not blank');
/** A condition's text: blank text would be a prefix or substring of everything. */
const conditionText = z
  .string()
  .max(500)
  .refine((value) => value.trim() !== '', 'not blank: blank text matches every alert');

/** One `healer.projectMapping` entry (core/healer.ts `HealerMappingRule`): every condition given must hold. */
const healerMappingRule = z
  .object({
    source: z.enum(ALERT_SOURCES).optional(),
    sourceProject: sourceProjectName.optional(),
    culprit: conditionText.optional(),
    title: conditionText.optional(),
    labels: z.record(z.string().min(1).max(100), conditionText).optional(),
  })
  .strict()
  .superRefine((rule, context) => {
    if (rule.labels && Object.keys(rule.labels).length === 0)
      context.addIssue({
        code: 'custom',
        path: ['labels'],
        message: 'an empty labels map matches every alert: name at least one label, or leave labels out',
      });
    else if (ruleSpecificity(rule) === 0)
      context.addIssue({
        code: 'custom',
        message:
          'a rule must name what it matches: at least one of sourceProject, culprit, title, labels ' +
          '(source alone matches every alert of that source)',
      });
  });

const healerSettings = z
  .object({
    enabled: z.boolean().default(false),
    maxRetries: z.number().int().min(0).default(3),
    /** Per fingerprint: at least this long between two healer runs of one problem. */
    cooldownMinutes: z.number().int().min(0).default(30),
    /** Per project: at least this long between any two healer runs, whatever their fingerprints. */
    projectCooldownMinutes: z.number().int().min(0).default(10),
    /** Per project: healer runs unfinished at once. */
    maxConcurrentRuns: z.number().int().min(1).max(20).default(1),
    role: name.default('healer'),
    /** The source projects whose alerts this project heals; absent: its repository's name. */
    sourceProjects: z.array(sourceProjectName).min(1).max(50).optional(),
    /** Which of those alerts it heals; none: all of them. */
    projectMapping: z.array(healerMappingRule).max(100).default([]),
  })
  .strict()
  .superRefine((healer, context) => {
    if (!healer.sourceProjects) return;
    const claims = new Set(healer.sourceProjects.map((claim) => claim.toLowerCase()));
    healer.projectMapping.forEach((rule, index) => {
      if (rule.sourceProject !== undefined && !claims.has(rule.sourceProject.toLowerCase()))
        context.addIssue({
          code: 'custom',
          path: ['projectMapping', index, 'sourceProject'],
          message: `"${rule.sourceProject}" is not among healer.sourceProjects, so the rule could never match`,
        });
    });
  });

export const previewSchema = z
  .object({
    type: z.enum(['server', 'static']),
    mode: z.enum(['path', 'subdomain']).optional(),
    command: z.string().min(1),
    setup: z.string().min(1).optional(),
    setup_timeout: duration.optional(),
    port: z.number().int().min(1).max(65535),
    readiness_path: z.string().startsWith('/').optional(),
    readiness_timeout: duration.optional(),
    connect_timeout: duration
      .refine((value) => durationSeconds(value) >= 1 && durationSeconds(value) <= 3600, 'between 1s and 1h')
      .optional(),
    idle_ttl: duration.optional(),
    max_lifetime: duration.optional(),
  })
  .strict();

/** An egress allowlist entry a project adds for its agents (public destinations only; docs/security.md). */
const egressEntry = z
  .string()
  .max(300)
  .superRefine((entry, context) => {
    try {
      parseEgressEntry(entry, 'project');
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

const resourceAmounts = z
  .object({
    memoryMiB: z.number().int().min(64).max(131072).optional(),
    cpuMillicores: z.number().int().min(10).max(64000).optional(),
  })
  .strict();
/** A path inside the repository: relative, never climbing out. */
export const repoRelativePath = z
  .string()
  .min(1)
  .max(512)
  .refine((path) => !path.startsWith('/') && !path.split('/').includes('..'), 'a repo-relative path without ".."');

export const defaultsSchema = z
  .object({
    defaultRole: name.optional(),
    defaultBranch: name.optional(),
    defaultPrompt: z.string().min(1).optional(),
    defaultProvider: name.optional(),
    defaultModel: name.optional(),
    runBranchPrefix: z
      .string()
      .max(FIELD_LIMITS.branchPrefix)
      .regex(/^[a-z0-9][a-z0-9-]*$/, 'a lowercase slug')
      .optional(),
    agentImage: z.string().min(1).max(512).optional(),
    kubernetes: projectPodSettings.optional(),
    preview: previewSchema.optional(),
    agent: z.object({ skipGitHooks: z.boolean().optional() }).strict().optional(),
    interactiveAgents: z
      .object({ plannerRuntime: z.enum(['claude-code', 'sapling', 'pi']).optional() })
      .strict()
      .optional(),
    resources: z
      .object({
        requests: resourceAmounts.optional(),
        limits: resourceAmounts.optional(),
        network: z.enum(['none', 'restricted', 'open']).optional(),
        egress: z.array(egressEntry).max(100).optional(),
      })
      .strict()
      .optional(),
    admission: z
      .object({ maxConcurrentRuns: z.number().int().min(1).optional() })
      .strict()
      .optional(),
    maxCostUsd: z.number().positive().optional(),
    /** Crossing the cost cap cancels the run, or pauses it until an operator raises the cap. */
    onCapHit: z.enum(['cancel', 'pause']).optional(),
    ciFixer: z
      .object({
        enabled: z.boolean().default(false),
        maxRetries: z.number().int().min(0).default(2),
        cooldownMinutes: z.number().int().min(0).default(10),
        logTailLines: z.number().int().min(1).default(200),
        role: name.default('pr-fixer'),
        /** The GitHub Apps (slugs) whose check runs are the project's CI; unset: GitHub Actions. */
        apps: z
          .array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'a GitHub App slug (lowercase letters, digits, -)'))
          .min(1)
          .max(20)
          .optional(),
      })
      .strict()
      .optional(),
    healer: healerSettings.optional(),
    qualityGate: refusedKey(
      'not supported: svc does not hold a PR for a review round; review with pr.followUps or leave the key out',
    ),
    /** Text put before every prompt a run of the project gives its agent (docs/guide/configuration.md). */
    repoContext: z.string().min(1).max(REPO_CONTEXT_MAX).optional(),
    /** Public mode: whether spectators may read this project's prompts (secrets still masked). */
    spectators: z
      .object({ showPrompts: z.boolean().default(false) })
      .strict()
      .optional(),
    tracker: refusedKey(
      "not supported: svc reads seeds and plans from the repository's .seeds/ files; leave the key out",
    ),
    pr: z
      .object({
        autoMerge: z
          .object({
            method: z.enum(['squash', 'merge', 'rebase']).default('squash'),
            protectedPaths: z.array(repoRelativePath).max(100).default([]),
          })
          .strict()
          .optional(),
        /** svc's own key: follow-up rounds on the PR (review follow-ups, and the limits of every round). */
        followUps: z
          .object({
            reviews: z.boolean().default(true),
            /** A PR comment starting `/svc` or `@svc`, by a user with write access, starts a round. */
            comments: z.boolean().default(true),
            /** A conflict with the base starts a round that merges the base in and resolves it. */
            conflicts: z.boolean().default(true),
            role: name.optional(),
            maxRounds: z.number().int().min(0).max(50).default(3),
            maxCostUsd: z.number().positive().optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type SvcDefaults = z.infer<typeof defaultsSchema>;
export type ProjectPodSettings = z.infer<typeof projectPodSettings>;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const triggerSchema = z
  .object({
    id: z
      .string()
      .max(FIELD_LIMITS.triggerId)
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'a lowercase slug'),
    kind: z.literal('cron'),
    cron: z
      .string()
      .max(FIELD_LIMITS.cron)
      .refine((cron) => [5, 6].includes(cron.trim().split(/\s+/).length), 'a cron expression of 5 or 6 fields'),
    seed: name.optional(),
    role: name,
    timezone: z
      .string()
      .max(FIELD_LIMITS.timezone)
      .refine(isTimeZone, 'an IANA time zone such as Europe/Paris')
      .optional(),
    prompt: z.string().min(1).optional(),
    maxCostUsd: z.number().positive().optional(),
  })
  .strict();
export type Trigger = z.infer<typeof triggerSchema>;

export const triggersSchema = z.array(triggerSchema).superRefine((triggers, ctx) => {
  const seen = new Set<string>();
  triggers.forEach((trigger, index) => {
    if (seen.has(trigger.id))
      ctx.addIssue({ code: 'custom', message: `duplicate trigger id "${trigger.id}"`, path: [index, 'id'] });
    seen.add(trigger.id);
  });
});
