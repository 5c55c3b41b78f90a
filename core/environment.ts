// A repository's environment: `.svc/environment.yaml` at a run's base commit, its schema, and what a
// run makes of it (the setup to run before the agent, its time limit, the files that key its
// result). Pure: the activities read the file with svc's git and run the setup in a sandbox
// (activities/environment-activities.ts); docs/guide/environments.md is the user's side.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { mcpServersSchema, type McpServer } from './mcp-servers.ts';
import type { ProjectSandboxSettings } from './run-model.ts';
import { servicePlan, servicesSchema, type ServicePlan } from './environment-services.ts';
import { duration, durationSeconds, repoRelativePath } from './svc-config.schema.ts';

export const ENVIRONMENT_FILE = '.svc/environment.yaml';

/** The file is read only up to this size: a setup script, not a payload. */
export const ENVIRONMENT_FILE_MAX_BYTES = 64 * 1024;

export const SETUP_TIMEOUT_DEFAULT = '10m';
/** The longest a setup may take: a run waits for it before its agent starts. */
export const SETUP_TIMEOUT_MAX_SECONDS = 2 * 3600;

/** The lockfiles that key a setup's result when the file names no `cacheKey`, wherever they are in the tree. */
export const DEFAULT_CACHE_KEY_FILES = [
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'poetry.lock',
  'uv.lock',
  'Pipfile.lock',
  'go.sum',
  'Cargo.lock',
  'Gemfile.lock',
] as const;

/** requirements.txt, requirements-dev.txt, requirements_test.txt…: a default cache-key file too. */
const REQUIREMENTS = /^requirements.*\.txt$/;

/** Whether a path of the tree is a default cache-key file (its last part is a known lockfile). */
export function isDefaultCacheKeyFile(path: string): boolean {
  const name = path.split('/').pop() ?? '';
  return (DEFAULT_CACHE_KEY_FILES as readonly string[]).includes(name) || REQUIREMENTS.test(name);
}

export const environmentSchema = z
  .object({
    setup: z
      .string()
      .max(ENVIRONMENT_FILE_MAX_BYTES)
      .refine((script) => script.trim() !== '', 'a bash script, not blank')
      .optional(),
    setupTimeout: duration
      .refine(
        (value) => durationSeconds(value) >= 1 && durationSeconds(value) <= SETUP_TIMEOUT_MAX_SECONDS,
        `between 1s and ${SETUP_TIMEOUT_MAX_SECONDS / 3600}h`,
      )
      .optional(),
    cacheKey: z.array(repoRelativePath).min(1).max(100).optional(),
    services: servicesSchema.optional(),
    mcp: mcpServersSchema.optional(),
  })
  .strict()
  .superRefine((file, context) => {
    if (file.setup === undefined && !file.services && !file.mcp)
      context.addIssue({
        code: 'custom',
        path: ['setup'],
        message: 'a setup script, services or MCP servers: none given',
      });
    // Only a setup has a time limit and a result to key: the keys would be accepted and ignored.
    if (file.setup === undefined)
      for (const key of ['setupTimeout', 'cacheKey'] as const)
        if (file[key] !== undefined) context.addIssue({ code: 'custom', path: [key], message: 'only with a setup' });
  });

/** What a run does with its repository's environment. */
export interface EnvironmentPlan {
  /** The setup script, or null: the file declares services or MCP servers only, and nothing is set up. */
  setup: string | null;
  setupTimeoutMs: number;
  /** The paths the file names, or null: the default lockfiles found in the tree. */
  cacheKey: string[] | null;
  /** The containers started beside the agent (absent in a plan written before services existed). */
  services?: ServicePlan[];
  /** The MCP servers handed to the agent (core/mcp-servers.ts), secrets as references; not part of the key. */
  mcp?: McpServer[];
}

export type EnvironmentRead = { plan: EnvironmentPlan } | { invalid: string };

/** Where in the file an unknown key is (`mcp.0: `), or nothing at its root. */
const where = (path: PropertyKey[]) => (path.length ? `${path.map(String).join('.')}: ` : '');

/** The file's text as a plan, or why it is refused (one message naming each problem and where). */
export function parseEnvironment(text: string): EnvironmentRead {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    return { invalid: `${ENVIRONMENT_FILE}: not YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { invalid: `${ENVIRONMENT_FILE}: a mapping with a setup script, services or MCP servers is expected` };
  const result = environmentSchema.safeParse(value);
  if (!result.success)
    return {
      invalid: `${ENVIRONMENT_FILE}: ${result.error.issues
        .map((issue) =>
          issue.code === 'unrecognized_keys'
            ? `${where(issue.path)}unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
            : `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        )
        .join('; ')}`,
    };
  const { setup, setupTimeout, cacheKey, services, mcp } = result.data;
  return {
    plan: {
      setup: setup ?? null,
      setupTimeoutMs: durationSeconds(setupTimeout ?? SETUP_TIMEOUT_DEFAULT) * 1000,
      cacheKey: cacheKey ?? null,
      ...(services ? { services: services.map(servicePlan) } : {}),
      ...(mcp ? { mcp } : {}),
    },
  };
}

/** What a shared build of a key needs: the project, the key, the base commit it checks out, the setup, the sandbox. */
export interface EnvironmentBuildInput {
  projectId: string;
  key: string;
  commit: string;
  plan: EnvironmentPlan;
  sandbox: ProjectSandboxSettings;
}

/**
 * The build workflow of a project's key: one id per (project, key), so that Temporal's id
 * uniqueness makes the runs that need it share one build (started with a use-existing policy).
 */
export const environmentBuildWorkflowId = (projectId: string, key: string) => `environment-${projectId}-${key}`;
