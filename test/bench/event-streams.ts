// 1,000 held /events/stream clients: the production topology (an API process, a
// worker process) with 1,000 NDJSON lifecycle streams open on the API; trivial runs go through
// their states, and every line is timed from its transition (the row's `ts`, written by the worker's
// projection on this machine's clock) to its arrival at each client. Also the API's RSS with the
// streams held, against the same process before they opened.
import { request as httpRequest, Agent, type IncomingMessage } from 'node:http';
import { waitFor } from '../support/processes.ts';
import { waitForRunState } from '../support/stack.ts';
import { percentile, rssMiB } from './measure.ts';
import { startBenchTopology } from './topology.ts';

export interface EventStreamsFigures {
  clients: number;
  runs: number;
  lines: number;
  /** Deliveries that never came: a line some client did not get. */
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  apiRssIdleMiB: number;
  apiRssHeldMiB: number;
}

/** A stream's chunks as they arrived (their text and when), and how many lines they end. */
type Arrivals = { chunks: { at: number; text: string }[]; lines: number };

/**
 * Opens one stream, recording each chunk with its arrival time; answers once the response has begun.
 * The lines are parsed only after the runs (`delaysOf`): with 1,000 streams in this one process,
 * parsing each chunk as it came delayed the next streams' reading by the parsing of all before them,
 * the bench's own cost counted as svc's.
 */
function openStream(url: string, token: string, agent: Agent, streams: Arrivals[]): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/events/stream`, { agent, headers: { authorization: `Bearer ${token}` } });
    req.once('error', reject);
    req.once('response', (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream: ${response.statusCode}`));
      const mine: Arrivals = { chunks: [], lines: 0 };
      streams.push(mine);
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        mine.chunks.push({ at: Date.now(), text });
        for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) mine.lines += 1;
      });
      resolve(response);
    });
    req.end();
  });
}

/** Each line's delay at each stream, from the chunks as they arrived: line key → delays (ms). */
function delaysOf(streams: Arrivals[]): Map<string, number[]> {
  const deliveries = new Map<string, number[]>();
  for (const stream of streams) {
    let pending = '';
    for (const { at, text } of stream.chunks) {
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const { runId, hook, ts } = JSON.parse(line) as { runId: string; hook: string; ts: string };
        const key = `${runId} ${hook}`;
        const list = deliveries.get(key) ?? [];
        list.push(at - Date.parse(ts));
        deliveries.set(key, list);
      }
    }
  }
  return deliveries;
}

export async function measureEventStreams(clients = 1000, runs = 20): Promise<EventStreamsFigures> {
  const topology = await startBenchTopology({ SVC_EVENT_STREAM_MAX: String(clients + 16) });
  const { api, server } = topology;
  await topology.startWorker();
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const responses: IncomingMessage[] = [];
  try {
    // Warm: one run before anything is measured.
    const warm = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } });
    await waitForRunState(api, warm.body.run.id);
    const apiRssIdleMiB = Math.round(rssMiB(server.child.pid!));

    const streams: Arrivals[] = [];
    for (let i = 0; i < clients; i++) responses.push(await openStream(topology.apiUrl, topology.token, agent, streams));
    // Each stream's starting point is one query after it subscribes: let the last ones settle.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const apiRssHeldMiB = Math.round(rssMiB(server.child.pid!));

    for (let i = 0; i < runs; i++) {
      const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } });
      await waitForRunState(api, response.body.run.id);
    }
    // The last lines on their way: a run is reaped after it reads terminal, so its last line may
    // not have reached anyone yet (waiting only for the lines seen so far would count it missing).
    await waitFor(
      async () => streams.every((stream) => stream.lines >= runs * 3),
      'every line at every client',
      10_000,
    ).catch(() => undefined);

    const deliveries = delaysOf(streams);
    const delays = [...deliveries.values()].flat();
    // A trivial run without a project has three transitions: dispatched, started, reaped.
    const unseenLines = Math.max(0, runs * 3 - deliveries.size);
    const missing =
      unseenLines * clients +
      [...deliveries.values()].reduce((sum, list) => sum + Math.max(0, clients - list.length), 0);
    return {
      clients,
      runs,
      lines: deliveries.size,
      missing,
      p50Ms: percentile(delays, 50),
      p99Ms: percentile(delays, 99),
      maxMs: delays.reduce((max, delay) => Math.max(max, delay), 0),
      apiRssIdleMiB,
      apiRssHeldMiB,
    };
  } finally {
    for (const response of responses) response.destroy();
    agent.destroy();
    await topology.stop();
  }
}
