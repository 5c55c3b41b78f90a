// 100 agents at once: the production topology (an API process, a worker process,
// one Temporal dev server) runs 100 `sleep` agents in bubblewrap; once all of them run, the memory
// of svc's processes: the API, the worker (and its spawner) and the supervisors (the worker's
// shared one, or one per run with SVC_SUPERVISOR=per-run), as RSS (each process's resident pages,
// shared ones counted in every process) and PSS (shared pages split among their sharers: what the
// machine really spends).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../support/processes.ts';
import { startBenchTopology } from './topology.ts';

export interface ConcurrentAgentsMemory {
  agents: number;
  supervisorProcesses: number;
  totalRssMiB: number;
  totalPssMiB: number;
  apiRssMiB: number;
  workerRssMiB: number;
  supervisorRssMiBPerAgent: number;
  supervisorPssMiBPerAgent: number;
}

/** kB of a /proc/<pid>/smaps_rollup field (Rss, Pss), 0 for a process gone. */
function rollup(pid: number, field: 'Rss' | 'Pss'): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** svc's processes of one data directory whose command line matches: `node … supervisor.(m)ts … <dataDir>/…`. */
function processesOf(dataDir: string, program: RegExp): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv.some((arg) => program.test(arg)) && argv.some((arg) => arg.startsWith(dataDir));
      } catch {
        return false;
      }
    })
    .map(Number);
}

const supervisorsOf = (dataDir: string) => processesOf(dataDir, /supervisor\.(ts|mjs)$/);

/** The worker's spawner (sandbox/host/spawner.ts), a child of the worker. */
function spawnersOf(workerPid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return parent === workerPid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('spawner-program.mjs');
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Sandboxes whose agent runs: an agent record, no exit record. */
function runningAgents(dataDir: string): number {
  const root = join(dataDir, 'sandboxes');
  if (!existsSync(root)) return 0;
  return readdirSync(root).filter(
    (run) => existsSync(join(root, run, 'agent.json')) && !existsSync(join(root, run, 'exit.json')),
  ).length;
}

export async function measureConcurrentAgents(agents = 100): Promise<ConcurrentAgentsMemory> {
  const topology = await startBenchTopology();
  const { environment, server, api } = topology;
  const worker = await topology.startWorker();
  const ids: string[] = [];
  try {
    for (let i = 0; i < agents; i++) {
      const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 300' } });
      ids.push(response.body.run.id);
    }
    await waitFor(async () => runningAgents(environment.dataDir) >= agents, `${agents} running agents`, 300_000);
    // Settled: every agent started, its proxies up.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const running = runningAgents(environment.dataDir);
    const supervisors = supervisorsOf(environment.dataDir);
    const mib = (kb: number) => Math.round(kb / 1024);
    const sum = (pids: number[], field: 'Rss' | 'Pss') => pids.reduce((total, pid) => total + rollup(pid, field), 0);
    const workerSide = [worker.child.pid!, ...spawnersOf(worker.child.pid!)];
    const svcProcesses = [server.child.pid!, ...workerSide, ...supervisors];
    return {
      agents: running,
      supervisorProcesses: supervisors.length,
      totalRssMiB: mib(sum(svcProcesses, 'Rss')),
      totalPssMiB: mib(sum(svcProcesses, 'Pss')),
      apiRssMiB: mib(rollup(server.child.pid!, 'Rss')),
      workerRssMiB: mib(sum(workerSide, 'Rss')),
      supervisorRssMiBPerAgent: mib(sum(supervisors, 'Rss') / running),
      supervisorPssMiBPerAgent: mib(sum(supervisors, 'Pss') / running),
    };
  } finally {
    for (const id of ids) await api.request('POST', `/runs/${id}/cancel`, { body: {} }).catch(() => undefined);
    await waitFor(async () => runningAgents(environment.dataDir) === 0, 'the agents gone', 120_000).catch(
      () => undefined,
    );
    await topology.stop();
  }
}
