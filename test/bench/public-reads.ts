// Public mode under readers: the API process (`svc serve --no-worker`, SVC_AUTH=public) holding a
// run of about 58 MB of events, 20 spectator clients (each from its own loopback address, so each
// has its own limits) reading that log page after page as fast as svc lets them (waiting out each
// 429's Retry-After), and /healthz asked every 20 ms meanwhile: its latency is the figure.
import { Agent, request as httpRequest } from 'node:http';
import { initORM } from '../../db/orm.ts';
import { seedBigRun } from '../support/big-run.ts';
import { percentile } from './measure.ts';
import { startBenchTopology } from './topology.ts';

export interface PublicReadsFigures {
  clients: number;
  runMiB: number;
  events: number;
  seconds: number;
  healthzP50Ms: number;
  healthzP99Ms: number;
  healthzMaxMs: number;
  probes: number;
  pages: number;
  eventsRead: number;
  refused429: number;
}

interface Page {
  status: number;
  retryAfter: number;
  lines: number;
  lastSeq: number;
}

/** One spectator page, counted as it arrives (the bench keeps no body). */
function readPage(url: string, localAddress: string): Promise<Page> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, agent: false }, (response) => {
      let lines = 0;
      let tail = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
        tail = (tail + text).slice(-4096);
      });
      response.on('end', () => {
        const last = tail.trimEnd().split('\n').at(-1) ?? '';
        const seq = response.statusCode === 200 && last ? (JSON.parse(last) as { seq: number }).seq : 0;
        const retryAfter = Number(response.headers['retry-after'] ?? 0);
        resolve({ status: response.statusCode!, retryAfter, lines, lastSeq: seq });
      });
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function probe(url: string, agent: Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/healthz`, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(performance.now() - started));
    });
    req.on('error', reject);
    req.end();
  });
}

export async function measurePublicReads(clients = 20, seconds = 20): Promise<PublicReadsFigures> {
  const topology = await startBenchTopology({ SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'bench' });
  const readModel = await initORM({ databaseUrl: topology.environment.databaseUrl });
  try {
    const big = await seedBigRun(readModel, { owner: 'bench', events: 200_000, lineBytes: 180 });
    const pagesUrl = `${topology.apiUrl}/runs/${big.runId}/events?follow=0`;
    const deadline = performance.now() + seconds * 1000;
    let pages = 0;
    let eventsRead = 0;
    let refused429 = 0;
    const reader = async (address: string) => {
      let since = 0;
      while (performance.now() < deadline) {
        const page = await readPage(`${pagesUrl}&since=${since}`, address);
        if (page.status === 429) {
          refused429 += 1;
          await new Promise((resolve) => setTimeout(resolve, page.retryAfter * 1000));
          continue;
        }
        if (page.status !== 200) throw new Error(`a spectator's page: ${page.status}`);
        pages += 1;
        eventsRead += page.lines;
        // The end of the log: read it again from the start.
        since = page.lines === 0 ? 0 : page.lastSeq;
      }
    };
    const readers = Array.from({ length: clients }, (_, i) => reader(`127.0.0.${100 + i}`));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    // Once every reader has begun: the figure is /healthz while they read.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    while (performance.now() < deadline) {
      latencies.push(await probe(topology.apiUrl, agent));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(readers);
    agent.destroy();
    return {
      clients,
      runMiB: Math.round(big.bytes / 2 ** 20),
      events: big.events,
      seconds,
      healthzP50Ms: percentile(latencies, 50),
      healthzP99Ms: percentile(latencies, 99),
      healthzMaxMs: Math.max(...latencies),
      probes: latencies.length,
      pages,
      eventsRead,
      refused429,
    };
  } finally {
    await readModel.close();
    await topology.stop();
  }
}
