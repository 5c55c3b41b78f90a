// `.svc/` files on disk: read them for loadSvcConfig, and write the scaffold (init) or the
// migration (config migrate) into a repository directory. Used by the API (project clones) and
// the CLI (--cwd).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  loadSvcConfig,
  migrateLegacyDefaults,
  scaffoldFiles,
  SVC_CONFIG_FILES,
  type LoadedSvcConfig,
  type SvcConfigFiles,
} from '../core/svc-config.ts';

export class SvcConfigFileError extends Error {
  readonly code: 'already_exists' | 'nothing_to_migrate' | 'invalid' | 'unreadable';
  constructor(code: SvcConfigFileError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SvcConfigFileError('unreadable', `${path}: ${(error as Error).message}`);
  }
}

export function readSvcConfigFiles(repoDir: string): SvcConfigFiles {
  return {
    config: readIfExists(join(repoDir, SVC_CONFIG_FILES.config)),
    legacyDefaults: readIfExists(join(repoDir, SVC_CONFIG_FILES.legacyDefaults)),
    triggers: readIfExists(join(repoDir, SVC_CONFIG_FILES.triggers)),
    preview: readIfExists(join(repoDir, SVC_CONFIG_FILES.preview)),
  };
}

export function loadSvcConfigFrom(repoDir: string): LoadedSvcConfig {
  return loadSvcConfig(readSvcConfigFiles(repoDir));
}

function writeAll(repoDir: string, files: Record<string, string>): string[] {
  for (const [relative, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repoDir, relative)), { recursive: true });
    writeFileSync(join(repoDir, relative), content, { flag: 'wx' });
  }
  return Object.keys(files);
}

export function scaffoldSvcConfig(repoDir: string, defaultRole: string | undefined): string[] {
  const taken = [SVC_CONFIG_FILES.triggers, SVC_CONFIG_FILES.config, SVC_CONFIG_FILES.legacyDefaults].filter((file) =>
    existsSync(join(repoDir, file)),
  );
  if (taken.length) throw new SvcConfigFileError('already_exists', `refusing to overwrite ${taken.join(', ')}`);
  return writeAll(repoDir, scaffoldFiles(defaultRole));
}

export function migrateSvcConfig(repoDir: string): string[] {
  const legacy = readIfExists(join(repoDir, SVC_CONFIG_FILES.legacyDefaults));
  if (legacy === null)
    throw new SvcConfigFileError('nothing_to_migrate', `no ${SVC_CONFIG_FILES.legacyDefaults} to migrate`);
  const taken = [SVC_CONFIG_FILES.config, SVC_CONFIG_FILES.preview].filter((file) => existsSync(join(repoDir, file)));
  if (taken.length) throw new SvcConfigFileError('already_exists', `refusing to overwrite ${taken.join(', ')}`);
  const migrated = migrateLegacyDefaults(legacy);
  if ('problem' in migrated)
    throw new SvcConfigFileError('invalid', `${migrated.problem.file}: ${migrated.problem.message}`);
  const written = writeAll(repoDir, migrated.files);
  rmSync(join(repoDir, SVC_CONFIG_FILES.legacyDefaults));
  return written;
}
