// A chatty agent's neighbours: while the worker ingests one run's `seq 1 1000000`, how much slower
// do other runs' dispatches (POST /runs) and the API's reads (GET /runs/{id}) answer than on the same
// topology when nothing is ingested? Each phase dispatches the same number of trivial runs, one
// after another, from an idle worker (the runs of the phase before have ended), so the only
// difference is the million lines being stored.
import { percentile, timed } from './measure.ts';
import { startBenchTopology } from './topology.ts';
import { waitFor } from '../support/processes.ts';
import { waitForRunState } from '../support/stack.ts';

const SAMPLES = 100;
const LINES = 1_000_000;

export async function measureIngestInterference() {
  const topology = await startBenchTopology();
  try {
    await topology.startWorker();
    const { api } = topology;
    const dispatch = async (prompt = 'true') => {
      const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt } });
      if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
      return response.body.run.id as string;
    };
    const lastSeq = async (runId: string) => {
      const { text } = await api.request('GET', `/runs/${runId}/events?before=${Number.MAX_SAFE_INTEGER}&limit=1`);
      return text.trim() ? (JSON.parse(text.trim()) as { seq: number }).seq : 0;
    };
    /** SAMPLES dispatches, each followed by a read of its run; answers once every one of them has ended. */
    const sample = async (whileSampling: () => Promise<unknown> = async () => undefined) => {
      const dispatchMs: number[] = [];
      const readMs: number[] = [];
      const ids: string[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        dispatchMs.push(await timed(async () => ids.push(await dispatch())));
        readMs.push(await timed(() => api.request('GET', `/runs/${ids.at(-1)}`)));
      }
      const seen = await whileSampling();
      for (const id of ids) await waitForRunState(api, id, undefined, 300_000);
      return { dispatchMs, readMs, seen };
    };
    // Warm: code paths compiled, the worker's first sandboxes started.
    await sample();
    const quiet = await sample();

    const chatty = await dispatch(`seq 1 ${LINES}`);
    await waitFor(async () => (await lastSeq(chatty)) > 10_000 || undefined, 'the chatty run to print', 120_000);
    const busy = await sample(() => lastSeq(chatty));
    const run = await waitForRunState(api, chatty, undefined, 600_000);
    if (run.state !== 'succeeded') throw new Error(`the chatty run ended ${run.state}`);

    const figures = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
    const [quietDispatch, busyDispatch] = [figures(quiet.dispatchMs), figures(busy.dispatchMs)];
    const [quietRead, busyRead] = [figures(quiet.readMs), figures(busy.readMs)];
    const round = (value: number) => Math.round(value * 100) / 100;
    return {
      dispatchP50Ratio: busyDispatch.p50 / quietDispatch.p50,
      readP99Ratio: busyRead.p99 / quietRead.p99,
      samples: SAMPLES,
      // Below LINES: the busy samples were all taken while the output was still being stored.
      linesStoredWhenSamplingEnded: busy.seen as number,
      quietDispatchP50Ms: round(quietDispatch.p50),
      busyDispatchP50Ms: round(busyDispatch.p50),
      quietDispatchP99Ms: round(quietDispatch.p99),
      busyDispatchP99Ms: round(busyDispatch.p99),
      quietReadP99Ms: round(quietRead.p99),
      busyReadP99Ms: round(busyRead.p99),
    };
  } finally {
    await topology.stop();
  }
}
