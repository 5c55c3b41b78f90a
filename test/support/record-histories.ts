// Records real runWorkflow histories for the replay test. Run it when a workflow change is meant
// to be incompatible (and guarded with patched()); commit the new files next to the old ones.
//   node test/support/record-histories.ts
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { loadConfig } from '../../stack/config.ts';
import { startStack } from '../../stack/stack.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from './free-port.ts';
import { request, testEnvironment, waitForRunState } from './stack.ts';

const scenarios: { file: string; prompt: string }[] = [
  { file: 'run-succeeded.json', prompt: 'echo recording\necho done' },
  { file: 'run-crashed.json', prompt: 'echo about to fail\nexit 2' },
];

const settings = loadTemporalDevSettings();
settings.port = await freePort();
settings.ui.enabled = false;
const temporal = await startTemporalDev(mkdtempSync(join(tmpdir(), 'svc-record-')), settings);
const environment = await testEnvironment({ temporalAddress: temporal.address });
const stack = await startStack({ config: loadConfig(environment.env), api: true, worker: true, noAuth: false, log: () => {} });
const connection = await Connection.connect({ address: temporal.address });
try {
  const api = { request: (method: string, path: string, options?: any) => request(stack.api!.url, stack.token.token, method, path, options) };
  for (const scenario of scenarios) {
    const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: scenario.prompt } });
    await waitForRunState(api, body.run.id);
    const history = await new Client({ connection }).workflow.getHandle(body.run.id).fetchHistory();
    const target = join('test', 'fixtures', 'histories', scenario.file);
    // The canonical proto3 JSON, the same format the Temporal UI and CLI export.
    writeFileSync(target, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
    console.log(`recorded ${target} (${history.events?.length} events)`);
  }
} finally {
  await connection.close();
  await stack.stop();
  await temporal.stop();
}
