// 100 agents at once (issue 17 §3): the production topology (an API process, a worker process,
// one Temporal dev server) runs 100 `sleep` agents in bubblewrap; once all of them run, the memory
// of svc's processes: the API, the worker and the 100 supervisors, as RSS (each process's resident
// pages, shared ones counted in every process) and PSS (shared pages split among their sharers:
// what the machine really spends).
import { readdirSync, readFileSync } from 'node:fs';
import { waitFor } from '../support/processes.ts';
import { startBenchTopology } from './topology.ts';

export interface ConcurrentAgentsMemory {
  agents: number;
  totalRssMiB: number;
  totalPssMiB: number;
  apiRssMiB: number;
  workerRssMiB: number;
  supervisorRssMiBMean: number;
  supervisorPssMiBMean: number;
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

/** The supervisors of one data directory: `node … supervisor.(m)ts <dataDir>/sandboxes/…`. */
function supervisorsOf(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv.some((arg) => /supervisor\.(ts|mjs)$/.test(arg)) && argv.some((arg) => arg.startsWith(dataDir));
      } catch {
        return false;
      }
    })
    .map(Number);
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
    await waitFor(async () => supervisorsOf(environment.dataDir).length >= agents, `${agents} supervisors`, 300_000);
    // Settled: every agent started, its proxies up.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const supervisors = supervisorsOf(environment.dataDir);
    const mib = (kb: number) => Math.round(kb / 1024);
    const apiRss = rollup(server.child.pid!, 'Rss');
    const workerRss = rollup(worker.child.pid!, 'Rss');
    const supervisorRss = supervisors.reduce((sum, pid) => sum + rollup(pid, 'Rss'), 0);
    const supervisorPss = supervisors.reduce((sum, pid) => sum + rollup(pid, 'Pss'), 0);
    return {
      agents: supervisors.length,
      totalRssMiB: mib(apiRss + workerRss + supervisorRss),
      totalPssMiB: mib(rollup(server.child.pid!, 'Pss') + rollup(worker.child.pid!, 'Pss') + supervisorPss),
      apiRssMiB: mib(apiRss),
      workerRssMiB: mib(workerRss),
      supervisorRssMiBMean: mib(supervisorRss / supervisors.length),
      supervisorPssMiBMean: mib(supervisorPss / supervisors.length),
    };
  } finally {
    for (const id of ids) await api.request('POST', `/runs/${id}/cancel`, { body: {} }).catch(() => undefined);
    await waitFor(async () => supervisorsOf(environment.dataDir).length === 0, 'the supervisors gone', 120_000).catch(
      () => undefined,
    );
    await topology.stop();
  }
}
