// The soak: the production topology (test/chaos/topology.ts) given runs at a steady rate for a long
// while, with retention set to minutes, mixing short, chatty, failing and cancelled agents. It
// samples the memory of every process and the size of everything on disk, and says whether both
// stay flat after warm-up and whether every run ended as it should, once.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTopology, type Topology } from '../chaos/topology.ts';

export interface SoakOptions {
  runs: number;
  minutes: number;
  log: (line: string) => void;
}

/** What each agent of the mix does, and how its run must end. */
export const MIX = [
  { agent: 'short', share: 0.75, command: 'echo done', expect: { state: 'succeeded' } },
  { agent: 'chatty', share: 0.05, command: 'seq 1 100000', expect: { state: 'succeeded' } },
  { agent: 'failing', share: 0.1, command: 'echo giving up >&2; exit 3', expect: { state: 'failed' } },
  { agent: 'cancelled', share: 0.1, command: 'echo waiting; sleep 600', expect: { state: 'cancelled' } },
] as const;
type Agent = (typeof MIX)[number]['agent'];

const SAMPLE_EVERY_MS = 15_000;
/** The share of the samples taken as warm-up: flatness is judged on the rest. */
const WARM_UP = 0.25;
/** How far the last stretch's mean may be from the first stretch after warm-up. */
const FLAT_WITHIN = 0.1;

export interface Sample {
  atSeconds: number;
  /**
   * PSS, MiB: the API, the worker (with its shared supervisor) and PostgreSQL (every backend), judged;
   * the Temporal server, reported: it keeps every closed workflow for its namespace's retention (at
   * least a day), so within an hour it holds more of them with every run, as its files do.
   */
  memory: Record<'api' | 'worker' | 'temporal' | 'postgres', number>;
  /**
   * Disk, MiB: svc's data directory (workspaces, sandboxes, salvage…) and the read model's tables
   * (PostgreSQL's files but its write-ahead log), judged; Temporal's files and PostgreSQL's WAL,
   * reported (Temporal keeps closed workflows at least a day; the WAL is recycled at max_wal_size).
   */
  disk: Record<'svcData' | 'readModel' | 'temporal' | 'postgresWal', number>;
  dispatched: number;
}

export interface SoakReport {
  runs: number;
  ended: Record<string, number>;
  wrong: string[];
  samples: Sample[];
  flat: Record<string, { early: number; late: number; change: number; flat: boolean }>;
  /** Reported, not judged: Temporal's memory and files and PostgreSQL's WAL, first and last sample. */
  reported: Record<'temporalMemoryMiB' | 'temporalMiB' | 'postgresWalMiB', { first: number; last: number }>;
  seconds: number;
}

/** Proportional set size of `pids`, in MiB: shared pages split among the processes that share them. */
function pssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone between the listing and the read
    }
  }
  return kib / 1024;
}

/** `pid` and every process below it. */
function tree(pid: number | undefined): number[] {
  if (!pid) return [];
  const children = (() => {
    try {
      return execFileSync('pgrep', ['-P', String(pid)])
        .toString()
        .trim()
        .split('\n')
        .filter(Boolean)
        .map(Number);
    } catch {
      return [];
    }
  })();
  return [pid, ...children.flatMap((child) => tree(child))];
}

/** The worker's shared supervisors: detached, so not below the worker. */
function supervisors(topology: Topology): number[] {
  try {
    return execFileSync('pgrep', ['-f', `${topology.dir}/data/programs/supervisor-`])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * What `paths` hold on disk, MiB, without the entries named `exclude` (du's own patterns). A file
 * retention removes while du walks makes du complain and exit 1: its total still counts the rest.
 */
const diskMiB = (paths: string[], exclude: string[] = []) => {
  const du = spawnSync('du', ['-sk', '--total', ...exclude.map((pattern) => `--exclude=${pattern}`), ...paths]);
  const total = /^(\d+)\ttotal$/m.exec(du.stdout.toString());
  if (!total) throw new Error(`du printed no total: ${du.stderr.toString()}`);
  return Number(total[1]) / 1024;
};

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** Early and late means after warm-up, and whether the late one is within FLAT_WITHIN of the early one. */
function flatness(values: number[]) {
  const settled = values.slice(Math.floor(values.length * WARM_UP));
  const third = Math.max(1, Math.floor(settled.length / 3));
  const early = mean(settled.slice(0, third));
  const late = mean(settled.slice(-third));
  const change = early > 0 ? (late - early) / early : 0;
  return {
    early: Math.round(early),
    late: Math.round(late),
    change: Number(change.toFixed(3)),
    flat: change <= FLAT_WITHIN,
  };
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-soak-')), 'agents.yaml');
  writeFileSync(
    agentsFile,
    [
      'agents:',
      ...MIX.map((each) => `  - { name: ${each.agent}, command: ["bash", "-c", ${JSON.stringify(each.command)}] }`),
    ].join('\n'),
  );
  const topology = await startTopology({
    SVC_AGENTS_FILE: agentsFile,
    SVC_RETENTION_INTERVAL: '1m',
    SVC_RETENTION_SANDBOXES: '1m',
    SVC_RETENTION_EVENTS: '3m',
    SVC_LOG_LEVEL: 'ERROR',
  });
  const started = Date.now();
  const token = topology.env.SVC_API_TOKEN!;
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${topology.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json().catch(() => null)) as any };
  };
  const runs = new Map<string, Agent>();
  const samples: Sample[] = [];
  try {
    // Ready: the API answers and a worker serves.
    for (let ready = false; !ready;) {
      ready = await api('GET', '/readyz')
        .then((answer) => answer.status === 200)
        .catch(() => false);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const sample = () => {
      samples.push({
        atSeconds: Math.round((Date.now() - started) / 1000),
        memory: {
          api: Math.round(pssMiB(tree(topology.api.pid()))),
          worker: Math.round(pssMiB([...tree(topology.worker.pid()), ...supervisors(topology)])),
          temporal: Math.round(pssMiB(tree(topology.temporal().pid))),
          postgres: Math.round(pssMiB(tree(postmasterPid(topology)))),
        },
        disk: {
          svcData: Math.round(diskMiB([join(topology.dir, 'data')])),
          readModel: Math.round(diskMiB([topology.postgres.dataDir], ['pg_wal'])),
          temporal: Math.round(diskMiB([topology.dir], [join(topology.dir, 'data')])),
          postgresWal: Math.round(diskMiB([join(topology.postgres.dataDir, 'pg_wal')])),
        },
        dispatched: runs.size,
      });
      const last = samples.at(-1)!;
      options.log(
        `soak: ${last.atSeconds} s, ${last.dispatched} runs, ` +
          `memory ${JSON.stringify(last.memory)} MiB, disk ${JSON.stringify(last.disk)} MiB`,
      );
    };
    sample();
    // A sample that fails ends the soak through its `finally` (the topology stopped), not the process.
    let sampleFailure: Error | undefined;
    const sampler = setInterval(() => {
      try {
        sample();
      } catch (error) {
        sampleFailure ??= error as Error;
      }
    }, SAMPLE_EVERY_MS);
    const gapMs = (options.minutes * 60_000) / options.runs;
    const pick = mixPicker();
    for (let index = 0; index < options.runs; index++) {
      if (sampleFailure) throw sampleFailure;
      const due = started + index * gapMs;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      const agent = pick();
      const key = `soak-${randomBytes(8).toString('hex')}`;
      for (let attempt = 0; ; attempt++) {
        const answer = await api('POST', '/runs', { agent, prompt: 'soak' }, { 'idempotency-key': key }).catch(() => ({
          status: 0,
          body: null,
        }));
        if (answer.status === 201 || answer.status === 200) {
          runs.set(answer.body.run.id, agent);
          if (agent === 'cancelled') setTimeout(() => void api('POST', `/runs/${answer.body.run.id}/cancel`, {}), 3000);
          break;
        }
        if (attempt > 20) throw new Error(`POST /runs kept failing: ${answer.status} ${JSON.stringify(answer.body)}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    // Every run to its end, then a retention pass's worth of time, sampled too.
    const ended: Record<string, number> = {};
    const wrong: string[] = [];
    for (const [id, agent] of runs) {
      let run: any;
      for (;;) {
        run = (await api('GET', `/runs/${id}`)).body?.run;
        if (run && ['succeeded', 'failed', 'cancelled'].includes(run.state)) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      ended[run.state] = (ended[run.state] ?? 0) + 1;
      const expected = MIX.find((each) => each.agent === agent)!.expect.state;
      if (run.state !== expected) wrong.push(`${id} (${agent}) ended ${run.state}, not ${expected}`);
    }
    const listed = (await api('GET', '/runs?limit=1')).body;
    if (listed?.total !== undefined && listed.total !== runs.size)
      wrong.push(`the read model holds ${listed.total} runs for ${runs.size} dispatched`);
    await new Promise((resolve) => setTimeout(resolve, 3 * 60_000));
    clearInterval(sampler);
    if (sampleFailure) throw sampleFailure;
    sample();
    const series: Record<string, number[]> = {
      svcDataMiB: samples.map((each) => each.disk.svcData),
      readModelMiB: samples.map((each) => each.disk.readModel),
      ...Object.fromEntries(
        (['api', 'worker', 'postgres'] as const).map((name) => [
          `${name}MiB`,
          samples.map((each) => each.memory[name]),
        ]),
      ),
    };
    const flat = Object.fromEntries(Object.entries(series).map(([name, values]) => [name, flatness(values)]));
    const reported = {
      temporalMemoryMiB: { first: samples[0]!.memory.temporal, last: samples.at(-1)!.memory.temporal },
      temporalMiB: { first: samples[0]!.disk.temporal, last: samples.at(-1)!.disk.temporal },
      postgresWalMiB: { first: samples[0]!.disk.postgresWal, last: samples.at(-1)!.disk.postgresWal },
    };
    const seconds = Math.round((Date.now() - started) / 1000);
    return { runs: runs.size, ended, wrong, samples, flat, reported, seconds };
  } finally {
    await topology.stop();
  }
}

/** The mix, spread evenly: each next run gets the agent whose share is furthest behind its count. */
export function mixPicker(): () => Agent {
  const counts = new Map<Agent, number>();
  let picked = 0;
  return () => {
    picked += 1;
    let best: Agent = MIX[0].agent;
    let deficit = -Infinity;
    for (const each of MIX) {
      const behind = each.share * picked - (counts.get(each.agent) ?? 0);
      if (behind > deficit) [best, deficit] = [each.agent, behind];
    }
    counts.set(best, (counts.get(best) ?? 0) + 1);
    return best;
  };
}

function postmasterPid(topology: Topology): number | undefined {
  try {
    return Number(readFileSync(join(topology.postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}
