// Steering latency: POST /runs/{id}/steer → the mid-run agent has the message. The
// agent speaks Claude Code's stream-json input behind svc's steering relay (the production path for
// a mid-run agent: the relay claims the run's inbox and writes each message into the agent's
// input) and stamps each message as it reads it, from bash's clock without a fork; the bench
// compares that with the moment it posted. One run, messages sent one at a time at random phases.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTerminalRunState } from '../../core/run-states.ts';
import { waitFor } from '../support/processes.ts';
import { runEventLines } from '../support/stack.ts';
import { percentile } from './measure.ts';
import { startBenchTopology, type BenchTopology } from './topology.ts';

export interface SteeringFigures {
  messages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Reads stream-json input like Claude Code: each message replayed as taken, stamped on arrival. */
const AGENT_SCRIPT = [
  'while IFS= read -r line; do',
  '  now=${EPOCHREALTIME/./}',
  `  printf '%s\\n' "\${line%\\}},\\"isReplay\\":true}"`,
  '  [[ $line =~ (mark-[0-9]+) ]] && echo "steered ${BASH_REMATCH[1]} $now"',
  '  case $line in *stop-now*) echo \'{"type":"result","subtype":"success","is_error":false}\'; exit 0;; esac',
  'done',
].join('\n');

export function agentsFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-bench-agents-')), 'agents.yaml');
  const command = JSON.stringify(['bash', '-c', AGENT_SCRIPT]);
  writeFileSync(
    file,
    [
      'agents:',
      '  - name: steered',
      '    runtime: claude-code',
      '    steering: mid-run',
      `    command: ${command}`,
    ].join('\n'),
  );
  return file;
}

export async function measureSteering(messages = 30): Promise<SteeringFigures> {
  const topology = await startBenchTopology({ SVC_AGENTS_FILE: agentsFile() });
  const { api } = topology;
  await topology.startWorker();
  let started: string | undefined;
  try {
    const dispatched = await api.request('POST', '/runs', { body: { agent: 'steered', prompt: 'wait for steering' } });
    if (dispatched.status !== 201) throw new Error(`dispatch: ${dispatched.status} ${dispatched.text}`);
    const runId = (started = dispatched.body.run.id as string);
    const arrivals = new Map<string, number>();
    const readArrivals = async () => {
      const log = (await runEventLines(api, runId)).join('\n');
      for (const match of log.matchAll(/steered (mark-\d+) (\d+)/g)) arrivals.set(match[1]!, Number(match[2]) / 1000);
    };
    await waitFor(
      async () => (await api.request('GET', `/runs/${runId}`)).body.run.state === 'running',
      'the agent running',
    );
    const delays: number[] = [];
    for (let i = 0; i < messages; i++) {
      // A random phase against the relay's poll, as a person's message would have.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 600));
      const mark = `mark-${i}`;
      const sentAt = Date.now();
      const steered = await api.request('POST', `/runs/${runId}/steer`, { body: { body: `do ${mark} next` } });
      if (steered.status !== 200) throw new Error(`steer: ${steered.status} ${steered.text}`);
      await waitFor(
        async () => {
          await readArrivals();
          return arrivals.has(mark);
        },
        `${mark} at the agent`,
        30_000,
      );
      delays.push(arrivals.get(mark)! - sentAt);
    }
    await api.request('POST', `/runs/${runId}/steer`, { body: { body: 'stop-now' } });
    return {
      messages,
      p50Ms: Math.round(percentile(delays, 50)),
      p99Ms: Math.round(percentile(delays, 99)),
      maxMs: Math.round(Math.max(...delays)),
    };
  } finally {
    // Its agent outlives the API and the worker (a run survives them): it must end first, or it
    // waits on its stdin for ever. stop-now ends it once the relay claims it; a cancel ends it otherwise.
    if (started) await endRun(api, started);
    await topology.stop();
  }
}

async function endRun(api: BenchTopology['api'], runId: string): Promise<void> {
  const ended = async () => isTerminalRunState((await api.request('GET', `/runs/${runId}`)).body.run.state);
  try {
    await waitFor(ended, 'the steered run to end', 5_000);
  } catch {
    await api.request('POST', `/runs/${runId}/cancel`, { body: {} });
    await waitFor(ended, 'the steered run to be cancelled', 30_000);
  }
}
