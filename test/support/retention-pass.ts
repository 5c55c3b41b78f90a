// A data directory's retention pass on demand: its Temporal Schedule triggered now, and the pass it
// starts awaited in GET /ops/overview.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { retentionScheduleId } from '../../worker/retention-schedule.ts';
import { suiteTemporalAddress } from './env.ts';
import { waitFor } from './processes.ts';
import type { TestStack } from './stack.ts';

/** Starts the data directory's retention Schedule now and answers the pass it starts, once reported. */
export async function retentionPass(svc: TestStack): Promise<any> {
  const connection = await Connection.connect({ address: suiteTemporalAddress() });
  try {
    const key = readFileSync(join(svc.config.dataDir, 'data-dir-key'), 'utf8').trim();
    const asked = Date.now();
    await new Client({ connection }).schedule.getHandle(retentionScheduleId(svc.config.taskQueue, key)).trigger();
    let pass: any;
    await waitFor(
      async () => {
        const { body } = await svc.request('GET', '/ops/overview');
        pass = body.retention.find((each: any) => Date.parse(each.finishedAt) >= asked);
        return pass !== undefined;
      },
      'a retention pass reported after the trigger',
      60_000,
    );
    return pass;
  } finally {
    await connection.close();
  }
}
