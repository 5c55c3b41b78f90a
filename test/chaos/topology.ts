// The production topology in one test machine: a Temporal server, a PostgreSQL server, an API
// process (`svc serve --no-worker`) and a worker process (`svc worker`), each of which the chaos
// suite may kill at any moment. API and worker are restarted by a supervisor loop, as systemd or
// Kubernetes would; Temporal and PostgreSQL are restarted by the suite itself.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadTemporalDevSettings, startTemporalDev, type RunningTemporal } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { spawnSvc, type ChildHandle } from '../support/processes.ts';

/** A process kept alive: restarted a moment after it exits, until the topology stops. */
class Supervised {
  readonly #name: string;
  readonly #args: string[];
  readonly #env: NodeJS.ProcessEnv;
  #current: ChildHandle | undefined;
  #stopping = false;
  starts = 0;

  constructor(name: string, args: string[], env: NodeJS.ProcessEnv) {
    this.#name = name;
    this.#args = args;
    this.#env = env;
  }

  start(): void {
    if (this.#stopping) return;
    this.starts += 1;
    const handle = spawnSvc(this.#args, this.#env);
    this.#current = handle;
    void handle.exited.then(() => {
      if (this.#current === handle && !this.#stopping) setTimeout(() => this.start(), 1000);
    });
  }

  kill(): void {
    this.#current?.child.kill('SIGKILL');
  }

  output(): string {
    return this.#current?.output() ?? '';
  }

  /** The running process's pid, if one runs. */
  pid(): number | undefined {
    const child = this.#current?.child;
    return child && child.exitCode === null ? child.pid : undefined;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    const handle = this.#current;
    if (!handle || handle.child.exitCode !== null) return;
    handle.child.kill('SIGTERM');
    const forced = setTimeout(() => handle.child.kill('SIGKILL'), 15_000);
    await handle.exited;
    clearTimeout(forced);
  }

  toString(): string {
    return this.#name;
  }
}

export interface Topology {
  /** Everything the topology keeps on disk: svc's data directory, Temporal's and PostgreSQL's files. */
  dir: string;
  apiUrl: string;
  temporalAddress: string;
  env: NodeJS.ProcessEnv;
  api: Supervised;
  worker: Supervised;
  temporal(): RunningTemporal;
  killTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  /** Starts Temporal again as a process supervisor would: a server slow to come back is started anew. */
  restartTemporal(log?: (line: string) => void): Promise<void>;
  postgres: PrivatePostgres;
  stop(): Promise<void>;
}

export async function startTopology(extraEnv: Record<string, string>): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-chaos-'));
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  settings.dbFile = join(dir, 'temporal.sqlite');
  let temporal = await startTemporalDev(join(dir, 'temporal'), settings);
  // A topology that cannot start leaves nothing running behind it (a live child would keep the
  // test process, and the whole suite, from ever ending).
  const postgres = await startPrivatePostgres().catch(async (error: unknown) => {
    await temporal.stop().catch(() => undefined);
    throw error;
  });
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...extraEnv,
    SVC_DATA_DIR: join(dir, 'data'),
    SVC_PORT: String(port),
    SVC_API_URL: apiUrl,
    SVC_API_TOKEN: `chaos-${randomBytes(12).toString('hex')}`,
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    SVC_TASK_QUEUE: `chaos-${randomBytes(4).toString('hex')}`,
  };
  const api = new Supervised('api', ['serve', '--no-worker'], env);
  const worker = new Supervised('worker', ['worker'], env);
  api.start();
  worker.start();
  return {
    dir,
    apiUrl,
    temporalAddress: temporal.address,
    env,
    api,
    worker,
    temporal: () => temporal,
    async killTemporal() {
      process.kill(-temporal.pid!, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
    async startTemporal() {
      temporal = await startTemporalDev(join(dir, 'temporal'), settings);
    },
    async restartTemporal(log = () => {}) {
      for (let attempt = 1; ; attempt++) {
        try {
          temporal = await startTemporalDev(join(dir, 'temporal'), settings);
          return;
        } catch (error) {
          if (attempt >= 5) throw error;
          log(`chaos: Temporal did not come back (${(error as Error).message}); starting it again`);
          try {
            process.kill(-temporal.pid!, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    },
    postgres,
    async stop() {
      await api.stop();
      await worker.stop();
      await temporal.stop().catch(() => undefined);
      postgres.destroy();
    },
  };
}
