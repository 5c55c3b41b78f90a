// Records real runWorkflow histories for the replay test. Run it when a workflow change is meant
// to be incompatible (and guarded with patched()); commit the new files next to the old ones.
//   node test/support/record-histories.ts [file.json …]   (default: every scenario)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { startIsolatedStack, waitForRunState } from './stack.ts';

const scenarios: { file: string; prompt: string; cancel?: boolean }[] = [
  { file: 'run-succeeded.json', prompt: 'echo recording\necho done' },
  { file: 'run-crashed.json', prompt: 'echo about to fail\nexit 2' },
  { file: 'run-cancelled.json', prompt: 'echo waiting\nsleep 60', cancel: true },
];

const isolated = await startIsolatedStack();
const connection = await Connection.connect({ address: isolated.temporal.address });
try {
  const { api } = isolated;
  for (const scenario of scenarios.filter((candidate) => process.argv.length <= 2 || process.argv.slice(2).includes(candidate.file))) {
    const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: scenario.prompt } });
    if (scenario.cancel) {
      await waitForRunState(api, body.run.id, ['running']);
      await api.request('POST', `/runs/${body.run.id}/cancel`, { body: { reason: 'recorded' } });
    }
    await waitForRunState(api, body.run.id);
    const history = await new Client({ connection }).workflow.getHandle(body.run.id).fetchHistory();
    const target = join('test', 'fixtures', 'histories', scenario.file);
    // The canonical proto3 JSON, the same format the Temporal UI and CLI export.
    writeFileSync(target, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
    console.log(`recorded ${target} (${history.events?.length} events)`);
  }
} finally {
  await connection.close();
  await isolated.stop();
}
