// `svc doctor --local`: what a deployment needs on the host svc serves from, checked from the same
// environment `svc serve` reads (platform/config.ts) and with the same code paths it uses (the
// ORM's init, the bubblewrap probe, the Temporal CLI lookup). Nothing here writes to the database
// or the data directory, except a probe file that is removed at once.
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrationsFor } from '../../db/migrations/index.ts';
import { dialectOf, initORM, type ReadModel } from '../../db/orm.ts';
import { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import { redactUrl } from '../../db/sqlite-to-postgres.ts';
import { AgentCatalog } from '../../platform/agent-catalog.ts';
import { dataPaths, loadConfig, type SvcConfig } from '../../platform/config.ts';
import { accountGitConfig, gitVersion } from '../../platform/host-git.ts';
import { loadSvcConfigFrom } from '../../platform/svc-config-files.ts';
import { agentChecks } from './agent-checks.ts';
import { diskChecks } from './disk-checks.ts';
import type { Finding } from './finding.ts';
import { sandboxCheck, staleWorkspacesCheck } from './sandbox-checks.ts';

export type { Finding } from './finding.ts';

const TIMEOUT_MS = 10_000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${TIMEOUT_MS / 1000}s`)), TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The deployment-side checks, in order, each as soon as it is known. */
export async function* localChecks(env: NodeJS.ProcessEnv): AsyncGenerator<Finding> {
  let config: SvcConfig;
  try {
    config = loadConfig(env);
  } catch (error) {
    // Every other check reads this configuration: without it there is nothing more to say.
    yield { name: 'config', level: 'fail', message: (error as Error).message, hint: 'see the README, Configuration' };
    return;
  }
  yield { name: 'config', level: 'ok', detail: `data directory ${config.dataDir}` };
  yield dataDirCheck(config.dataDir);
  yield* diskChecks(config);
  yield operatorTokenCheck(config);
  yield agentsCheck(config.agentsFile);
  yield* gitChecks();
  const db = await openDatabase(config);
  try {
    yield db.finding;
    yield writableDirCheck('projects_root', config.projectsRoot, 'SVC_PROJECTS_DIR');
    yield await sandboxCheck(config);
    yield* agentChecks(config);
    yield await temporalCheck(config, env);
    yield* await svcConfigChecks(db.readModel);
    yield await staleWorkspacesCheck(config.dataDir, db.readModel);
  } finally {
    await db.readModel?.close().catch(() => {});
  }
}

function dataDirCheck(dataDir: string): Finding {
  if (!existsSync(dataDir)) {
    const parent = writableDirCheck('data_dir', dirname(dataDir), 'SVC_DATA_DIR');
    if (parent.level === 'fail') return parent;
    return { name: 'data_dir', level: 'warn', message: `${dataDir} does not exist yet: svc serve creates it` };
  }
  const found = writableDirCheck('data_dir', dataDir, 'SVC_DATA_DIR');
  if (found.level === 'ok' && (statSync(dataDir).mode & 0o077) !== 0)
    return {
      name: 'data_dir',
      level: 'warn',
      message: `${dataDir} is open to other users (it holds the token and run tokens)`,
      hint: 'svc serve reseals it to 0700 on start; or chmod 700 it now',
    };
  return found;
}

/** A directory svc writes into (or the nearest existing parent it would create it in). */
function writableDirCheck(name: string, path: string, variable: string): Finding {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const fail = (message: string): Finding => ({ name, level: 'fail', message, hint: `fix ${variable} or the rights` });
  if (!statSync(existing).isDirectory()) return fail(`${existing} is not a directory`);
  try {
    accessSync(existing, constants.W_OK);
    // access() says yes to root on a read-only mount: only a real write tells.
    const probe = join(existing, `.svc-doctor-${randomBytes(4).toString('hex')}`);
    writeFileSync(probe, '', { flag: 'wx' });
    rmSync(probe, { force: true });
  } catch (error) {
    return fail(`${existing} is not writable: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return { name, level: 'ok', detail: existing === path ? path : `${path} (svc creates it in ${existing})` };
}

function operatorTokenCheck(config: SvcConfig): Finding {
  const name = 'operator_token';
  if (config.apiToken)
    return config.apiToken.length < 20
      ? { name, level: 'warn', message: 'SVC_API_TOKEN is short enough to guess', hint: 'use 32 random bytes' }
      : { name, level: 'ok', detail: 'from SVC_API_TOKEN' };
  const path = dataPaths.operatorToken(config.dataDir);
  if (!existsSync(path))
    return {
      name,
      level: 'warn',
      message: `no SVC_API_TOKEN and no ${path} yet: svc serve mints one there on start`,
      hint: 'set SVC_API_TOKEN to choose it yourself',
    };
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (error) {
    return { name, level: 'fail', message: `${path}: ${(error as Error).message}` };
  }
  if (!token) return { name, level: 'fail', message: `${path} is empty`, hint: 'delete it: svc serve mints a new one' };
  if ((statSync(path).mode & 0o077) !== 0)
    return { name, level: 'warn', message: `${path} is readable by other users`, hint: `chmod 600 ${path}` };
  return { name, level: 'ok', detail: `from ${path}` };
}

/** The agent catalog svc serve loads at start (SVC_AGENTS_FILE, else the built-in agents). */
function agentsCheck(agentsFile: string | undefined): Finding {
  try {
    const names = AgentCatalog.load(agentsFile)
      .list()
      .map((agent) => agent.name);
    return { name: 'agents', level: 'ok', detail: `${names.join(', ')} (${agentsFile ?? 'built in'})` };
  } catch (error) {
    return { name: 'agents', level: 'fail', message: (error as Error).message, hint: 'fix SVC_AGENTS_FILE' };
  }
}

function* gitChecks(): Generator<Finding> {
  try {
    yield { name: 'git', level: 'ok', detail: gitVersion() };
  } catch {
    yield { name: 'git', level: 'fail', message: 'git is not installed', hint: 'svc clones and pushes with git' };
    return;
  }
  const [user, email] = [accountGitConfig('user.name'), accountGitConfig('user.email')];
  // A warning only: svc never commits on the host; every run's workspace sets its own identity.
  yield user && email
    ? { name: 'git_identity', level: 'ok', detail: `${user} <${email}> (runs commit with their own)` }
    : {
        name: 'git_identity',
        level: 'warn',
        message: 'no git user.name/user.email for this account: svc does not need one, git run here by hand does',
        hint: 'git config --global user.name …; git config --global user.email …',
      };
}

async function openDatabase(config: SvcConfig): Promise<{ finding: Finding; readModel?: ReadModel }> {
  const name = 'db_reachable';
  const where = dialectOf(config.databaseUrl) === 'sqlite' ? config.databaseUrl : redactUrl(config.databaseUrl);
  // initORM would create an empty SQLite file: a check must not.
  if (dialectOf(config.databaseUrl) === 'sqlite' && !existsSync(config.databaseUrl))
    return { finding: { name, level: 'warn', message: `no database yet at ${where}: svc serve creates it` } };
  let readModel: ReadModel | undefined;
  try {
    readModel = await withTimeout(initORM({ databaseUrl: config.databaseUrl }), 'the database');
    await withTimeout(readModel.em().getConnection().execute('select 1'), 'the database');
  } catch (error) {
    await readModel?.close().catch(() => {});
    return {
      finding: { name, level: 'fail', message: `${where}: ${(error as Error).message}`, hint: 'check DATABASE_URL' },
    };
  }
  const known = migrationsFor(readModel.dialect).map((migration) => migration.name);
  let applied: string[] = [];
  try {
    applied = (
      (await readModel.em().getConnection().execute('select name from svc_migrations')) as { name: string }[]
    ).map((row) => row.name);
  } catch {
    // No migrations table: an empty database, which the first start migrates.
  }
  const unknown = applied.filter((migration) => !known.includes(migration));
  if (unknown.length)
    return {
      readModel,
      finding: {
        name,
        level: 'fail',
        message: `${where} was migrated by a newer svc (${unknown.join(', ')})`,
        hint: 'run the svc version that migrated it',
      },
    };
  const pending = known.length - applied.length;
  return {
    readModel,
    finding: pending
      ? { name, level: 'warn', message: `${where}: ${pending} migration(s) pending: svc serve applies them on start` }
      : { name, level: 'ok', detail: `${readModel.dialect} at ${where}, schema up to date` },
  };
}

async function temporalCheck(config: SvcConfig, env: NodeJS.ProcessEnv): Promise<Finding> {
  const name = 'temporal_reachable';
  const { Connection } = await import('@temporalio/client');
  const { findTemporalCli, loadTemporalDevSettings } = await import('../../stack/temporal-dev.ts');
  const embedded = loadTemporalDevSettings(env);
  const address = config.temporalAddress ?? `${embedded.ip}:${embedded.port}`;
  const namespace = config.temporalAddress ? config.temporalNamespace : embedded.namespace;
  let problem: string | undefined;
  try {
    const connection = await Connection.connect({ address, connectTimeout: TIMEOUT_MS });
    await connection.withDeadline(Date.now() + TIMEOUT_MS, () =>
      connection.workflowService.describeNamespace({ namespace }),
    );
    // Closed only after a success: closing under the client's pending retry throws from a timer
    // nothing can catch. A failed connection is left to the command's exit.
    await connection.close();
  } catch (error) {
    problem = (error as Error).message;
  }
  if (!problem) return { name, level: 'ok', detail: `${address}, namespace ${namespace}` };
  if (config.temporalAddress)
    return {
      name,
      level: 'fail',
      message: `${address}: ${problem}`,
      hint: 'check TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE',
    };
  // The embedded server is svc serve's own: not running yet is fine if it can be started.
  try {
    const cli = findTemporalCli(env);
    return cli.path
      ? { name, level: 'ok', detail: `embedded: svc serve starts ${cli.path} at ${address}` }
      : {
          name,
          level: 'warn',
          message: 'no Temporal CLI here: svc serve downloads one on start (needs internet)',
          hint: 'install the temporal CLI, or set SVC_TEMPORAL_CLI',
        };
  } catch (error) {
    return { name, level: 'fail', message: (error as Error).message };
  }
}

/** Every registered project's `.svc/` files, read from its clone as the API reads them. */
async function svcConfigChecks(readModel: ReadModel | undefined): Promise<Finding[]> {
  if (!readModel) return [{ name: 'svc_config', level: 'ok', detail: 'skipped: no database to list projects from' }];
  const errors: string[] = [];
  const warnings: string[] = [];
  const projects = await new ProjectsRepository(readModel).all();
  for (const project of projects) {
    if (!existsSync(join(project.localPath, '.git'))) {
      errors.push(`${project.id}: no clone at ${project.localPath}`);
      continue;
    }
    try {
      const loaded = loadSvcConfigFrom(project.localPath);
      for (const problem of loaded.errors) errors.push(`${project.id}: ${problem.file}: ${problem.message}`);
      for (const problem of loaded.warnings) warnings.push(`${project.id}: ${problem.file}: ${problem.message}`);
    } catch (error) {
      errors.push(`${project.id}: ${(error as Error).message}`);
    }
  }
  const list = (items: string[]) => items.slice(0, 3).join('; ') + (items.length > 3 ? ` (+${items.length - 3})` : '');
  return [
    errors.length
      ? {
          name: 'svc_config',
          level: 'fail',
          message: list(errors),
          hint: "fix the repository's .svc/ files, then refresh the project",
        }
      : { name: 'svc_config', level: 'ok', detail: `${projects.length} project(s)` },
    warnings.length
      ? { name: 'svc_config_deprecations', level: 'warn', message: list(warnings), hint: 'svc config migrate' }
      : { name: 'svc_config_deprecations', level: 'ok' },
  ];
}
