// A project's `.svc/` policy files: config.yaml (or the legacy defaults.json), triggers.yaml and
// preview.yaml, validated strictly. Pure: callers hand in file contents and get typed settings
// plus the problems, each with a stable code.
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { z } from 'zod';
import { defaultsSchema, previewSchema, triggersSchema, type SvcDefaults, type Trigger } from './svc-config.schema.ts';

export type { SvcDefaults, Trigger };

export const SVC_CONFIG_FILES = {
  config: '.svc/config.yaml',
  legacyDefaults: '.svc/defaults.json',
  triggers: '.svc/triggers.yaml',
  preview: '.svc/preview.yaml',
} as const;

export type ConfigProblemCode = 'svc_config_parse_error' | 'svc_config_schema_error' | 'svc_config_deprecated';
export interface ConfigProblem {
  file: string;
  code: ConfigProblemCode;
  message: string;
}

export interface SvcConfigFiles {
  config: string | null;
  legacyDefaults: string | null;
  triggers: string | null;
  preview: string | null;
}

export interface LoadedSvcConfig {
  triggers: Trigger[] | null;
  defaults: SvcDefaults | null;
  sourceFile: string | null;
  errors: ConfigProblem[];
  warnings: ConfigProblem[];
}

function parseFile<T>(
  file: string,
  text: string,
  format: 'yaml' | 'json',
  schema: z.ZodType<T>,
  errors: ConfigProblem[],
): T | null {
  let value: unknown;
  try {
    value = format === 'json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    errors.push({ file, code: 'svc_config_parse_error', message: (error as Error).message.split('\n')[0]! });
    return null;
  }
  const result = schema.safeParse(value ?? (format === 'yaml' && file === SVC_CONFIG_FILES.triggers ? [] : {}));
  if (result.success) return result.data;
  errors.push({
    file,
    code: 'svc_config_schema_error',
    message: result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '),
  });
  return null;
}

export function loadSvcConfig(files: SvcConfigFiles): LoadedSvcConfig {
  const errors: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  let defaults: SvcDefaults | null = null;
  let sourceFile: string | null = null;
  if (files.config !== null) {
    defaults = parseFile(SVC_CONFIG_FILES.config, files.config, 'yaml', defaultsSchema, errors);
    sourceFile = SVC_CONFIG_FILES.config;
    if (files.legacyDefaults !== null)
      warnings.push({
        file: SVC_CONFIG_FILES.legacyDefaults,
        code: 'svc_config_deprecated',
        message: 'ignored: config.yaml takes precedence; remove defaults.json',
      });
  } else if (files.legacyDefaults !== null) {
    defaults = parseFile(SVC_CONFIG_FILES.legacyDefaults, files.legacyDefaults, 'json', defaultsSchema, errors);
    sourceFile = SVC_CONFIG_FILES.legacyDefaults;
    warnings.push({
      file: SVC_CONFIG_FILES.legacyDefaults,
      code: 'svc_config_deprecated',
      message: 'defaults.json is deprecated: run `svc config migrate`',
    });
  }
  if (files.preview !== null) {
    const preview = parseFile(
      SVC_CONFIG_FILES.preview,
      files.preview,
      'yaml',
      z.object({ preview: previewSchema }).strict(),
      errors,
    );
    // preview.yaml wins over a preview block nested in config.yaml.
    if (preview) defaults = { ...(defaults ?? {}), preview: preview.preview };
  }
  const triggers =
    files.triggers === null
      ? null
      : parseFile(SVC_CONFIG_FILES.triggers, files.triggers, 'yaml', triggersSchema, errors);
  return { triggers, defaults, sourceFile, errors, warnings };
}

/** A config problem that blocks dispatch: a broken config.yaml/defaults.json (not triggers or preview). */
export function blockingProblem(config: LoadedSvcConfig): ConfigProblem | undefined {
  return config.errors.find(
    (problem) => problem.file === SVC_CONFIG_FILES.config || problem.file === SVC_CONFIG_FILES.legacyDefaults,
  );
}

const TRIGGERS_HEADER = [
  '# Cron triggers for svc: each entry dispatches a run of `role` on its schedule.',
  '# - id: nightly',
  '#   kind: cron',
  '#   cron: "0 3 * * *"',
  '#   timezone: Europe/Paris',
  '#   role: shell',
  '#   prompt: "…"',
  '',
].join('\n');
const CONFIG_HEADER =
  '# svc project settings (defaultRole, defaultPrompt, runBranchPrefix, maxCostUsd, preview, pr, …).\n';
const PREVIEW_HEADER = '# Preview deployment for runs of this project.\n';

export function scaffoldFiles(defaultRole: string | undefined): Record<string, string> {
  return {
    [SVC_CONFIG_FILES.triggers]: `${TRIGGERS_HEADER}[]\n`,
    [SVC_CONFIG_FILES.config]: `${CONFIG_HEADER}${defaultRole ? toYaml({ defaultRole }) : '{}\n'}`,
  };
}

/** defaults.json → config.yaml (+ preview.yaml when it has a preview block). */
export function migrateLegacyDefaults(
  legacyJson: string,
): { files: Record<string, string> } | { problem: ConfigProblem } {
  const errors: ConfigProblem[] = [];
  const defaults = parseFile(SVC_CONFIG_FILES.legacyDefaults, legacyJson, 'json', defaultsSchema, errors);
  if (!defaults) return { problem: errors[0]! };
  const { preview, ...rest } = defaults;
  const files: Record<string, string> = {
    [SVC_CONFIG_FILES.config]: `${CONFIG_HEADER}${Object.keys(rest).length ? toYaml(rest) : '{}\n'}`,
  };
  if (preview) files[SVC_CONFIG_FILES.preview] = `${PREVIEW_HEADER}${toYaml({ preview })}`;
  return { files };
}
