// What the backend tests (container, Kubernetes) do to a stack: register a GitHub stand-in
// project, dispatch a shell run, read a run's events, and run one pass of the reconciler.
import { Client, Connection } from '@temporalio/client';
import { reconcilerScheduleId } from '../../worker/reconciler-schedule.ts';
import { runEvents, type TestStack } from './stack.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * An agents file with `poller`: a mid-run steerable agent that polls its inbox through its callback
 * routes and prints the first message it gets (the steering test of every backend). Answers its path.
 */
export function pollerAgentsFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
  writeFileSync(
    file,
    [
      'agents:',
      '  - name: poller',
      '    steering: mid-run',
      '    command: ["bash", "-c", "echo ready; for i in $(seq 1 150); do ' +
        'out=$(curl -sf $SVC_BASE_URL/runs/$SVC_RUN_ID/inbox); ' +
        'case $out in *body*) echo \\"got $out\\"; exit 0;; esac; sleep 0.2; done; exit 1"]',
    ].join('\n'),
  );
  return file;
}

/** The helpers, bound to a stack made later (a test file's `before` hook). */
export function backendRuns(svc: () => TestStack) {
  return {
    async register(name: string): Promise<string> {
      const body = { gitUrl: `https://github.com/acme/${name}` };
      return (await svc().request('POST', '/projects', { body })).body.project.id as string;
    },
    async dispatch(body: Record<string, unknown>): Promise<string> {
      const response = await svc().request('POST', '/runs', { body: { agent: 'shell', ...body } });
      if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
      return response.body.run.id as string;
    },
    async events(runId: string) {
      return runEvents(svc(), runId);
    },
    /** One pass of the reconciler, on its Temporal Schedule's own action. */
    async reconcilerPass(): Promise<void> {
      const connection = await Connection.connect({ address: svc().stack.temporalAddress });
      try {
        await new Client({ connection }).schedule.getHandle(reconcilerScheduleId(svc().config.taskQueue)).trigger();
      } finally {
        await connection.close();
      }
    },
  };
}
