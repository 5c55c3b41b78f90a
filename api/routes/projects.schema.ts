// Request and response schemas of the projects, seeds, config and triggers routes.
import { z } from 'zod';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { projectSchema } from '../../core/project-schema.ts';

export const projectIdParams = z.object({ id: z.string().min(1).max(FIELD_LIMITS.idParam) }).strict();
export const seedParams = z
  .object({ id: z.string().min(1).max(FIELD_LIMITS.idParam), seedId: z.string().min(1).max(FIELD_LIMITS.name) })
  .strict();
export const triggerParams = z
  .object({ id: z.string().min(1).max(FIELD_LIMITS.idParam), triggerId: z.string().min(1).max(FIELD_LIMITS.triggerId) })
  .strict();

export const registerProjectBody = z
  .object({
    gitUrl: z.string().min(1, 'required: a GitHub repository URL').max(FIELD_LIMITS.gitUrl),
    defaultBranch: z
      .string()
      .trim()
      .min(1)
      .max(FIELD_LIMITS.name)
      .regex(/^[^\s~^:?*[\\]+$/, 'a git branch name')
      .nullable()
      .optional(),
  })
  .strict();

export const refreshProjectBody = z
  .object({
    ref: z
      .string()
      .trim()
      .min(1)
      .max(FIELD_LIMITS.name)
      .regex(/^[^\s~^:?*[\\]+$/, 'a git ref')
      .nullable()
      .optional(),
  })
  .strict();

export const initProjectBody = z
  .object({ defaultRole: z.string().max(FIELD_LIMITS.name).trim().min(1).nullable().optional() })
  .strict();

export { projectSchema };

/** What a spectator (public mode) sees: no path on the server's disk. */
export const spectatorProjectSchema = projectSchema.omit({ localPath: true });
/** A project as a reader sees it: the operator's view, or the spectator's. */
const projectView = z.union([projectSchema, spectatorProjectSchema]);

export const projectResponse = z.object({ project: projectSchema });
export const projectViewResponse = z.object({ project: projectView });
export const projectsResponse = z.object({ projects: z.array(projectView) });
export const refreshResponse = z.object({ project: projectSchema, headSha: z.string(), ref: z.string() });

export const seedSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: z.string(),
  blockedBy: z.array(z.string()),
});
export const planSummarySchema = z.object({
  id: z.string(),
  status: z.string(),
  seed: z.string().optional(),
  template: z.string().optional(),
  revision: z.number().int().optional(),
  name: z.string().optional(),
  childCount: z.number().int(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export const plansResponse = z.object({ plans: z.array(planSummarySchema) });
export const readyPlansResponse = z.object({
  plans: z.array(
    z.object({ id: z.string(), name: z.string().optional(), status: z.string(), openChildCount: z.number().int() }),
  ),
});

const configProblem = z.object({
  file: z.string(),
  code: z.enum(['svc_config_parse_error', 'svc_config_schema_error', 'svc_config_deprecated']),
  message: z.string(),
});
export const svcConfigResponse = z.object({
  triggers: z.array(z.record(z.string(), z.unknown())).nullable(),
  defaults: z.record(z.string(), z.unknown()).nullable(),
  sourceFile: z.string().nullable(),
  errors: z.array(configProblem),
  warnings: z.array(configProblem),
});
export const triggersResponse = z.object({
  triggers: z.array(
    z.object({
      id: z.string(),
      kind: z.literal('cron'),
      cron: z.string(),
      seed: z.string().nullable(),
      role: z.string(),
      timezone: z.string().optional(),
      prompt: z.string().optional(),
      lastFiredAt: z.string().nullable(),
      nextFireAt: z.string().nullable(),
      lastRunId: z.string().nullable(),
      parseError: z.string().nullable(),
    }),
  ),
  errors: z.array(configProblem),
});
export const initResponse = z.object({ files: z.array(z.string()), defaultRole: z.string().nullable() });
export const migrateResponse = z.object({ files: z.array(z.string()) });

export const forgeReposResponse = z.object({
  supported: z.boolean(),
  repos: z.array(
    z.object({
      owner: z.string(),
      name: z.string(),
      cloneUrl: z.string(),
      defaultBranch: z.string(),
      private: z.boolean(),
    }),
  ),
  error: z.string().optional(),
});
