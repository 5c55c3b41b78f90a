// Request and response schemas of the operations routes: GET /instance, /ops/overview, /setup, /metrics,
// POST /setup-codes.
import { z } from 'zod';
import { RUN_STATES } from '../../core/run-states.ts';

const publicInstance = z.object({
  version: z.string(),
  name: z.string(),
  publicUrl: z.string().nullable(),
  runtime: z.string().describe('The sandbox backend agents run in'),
  authMode: z.enum(['token', 'public']),
});
export const instanceResponse = z.union([
  publicInstance.extend({
    dbBackend: z.enum(['sqlite', 'postgresql']),
    uptimeSeconds: z.number().int(),
    admission: z
      .object({
        maxConcurrentRuns: z.number().int().nullable().describe('SVC_MAX_CONCURRENT_RUNS: runs past it wait, queued'),
        maxQueueDepth: z.number().int().nullable().describe('Kubernetes: queued runs past which dispatch is refused'),
        maxPendingPods: z.number().int().nullable().describe("Kubernetes: svc's Pending pods past which it is refused"),
      })
      .nullable()
      .describe("The instance's admission caps; null: none (projects' own maxConcurrentRuns still apply)"),
  }),
  publicInstance.describe('What spectators see'),
]);

export const overviewQuery = z.object({ window: z.enum(['24h', '7d', '30d']).default('24h') }).strict();

const spend = z.object({ windowRuns: z.number().int(), priced: z.number().int() });
export const overviewResponse = z.object({
  window: z.enum(['24h', '7d', '30d']),
  generatedAt: z.string(),
  runs: z.object({
    byState: z.object(Object.fromEntries(RUN_STATES.map((state) => [state, z.number().int()]))),
    total: z.number().int().describe('Runs created in the window (byState counts those)'),
    nonTerminal: z.number().int().describe('Queued and running runs, whenever created'),
  }),
  spend: z.union([spend.extend({ costUsd: z.number() }), spend.describe('Spectators do not see USD')]),
  delivery: z.object({ branchesPushed: z.number().int(), prsOpened: z.number().int(), prsMerged: z.number().int() }),
  services: z.object({
    runtime: z.string(),
    dbBackend: z.enum(['sqlite', 'postgresql']),
    dbReachable: z.boolean(),
    temporalReachable: z.boolean(),
    lifecycleStreams: z.number().int(),
    runEventStreams: z.number().int(),
  }),
  retention: z
    .array(
      z.object({
        host: z.string().describe('The worker host whose data directory the pass swept'),
        finishedAt: z.string(),
        removed: z.record(z.string(), z.number().int()).describe('Items removed, by kind'),
        reclaimedBytes: z.record(z.string(), z.number().int()).describe('Bytes given back on disk, by kind'),
      }),
    )
    .describe("Each data directory's last retention pass, the latest first (empty for spectators)"),
});

export const setupQuery = z.object({ code: z.string().max(200).optional() }).strict();

export const setupCodeResponse = z.object({
  path: z.string().describe("The one-time sign-in page, /setup?code=…, on any of the instance's API processes"),
  url: z.string().nullable().describe('The whole link when the instance has a public URL (SVC_PUBLIC_URL); else null'),
  expiresAt: z.string().describe('When the code stops working, unless spent first (ten minutes)'),
});
