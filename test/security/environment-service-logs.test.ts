// A run's services are repository content: what one prints is as hostile as the agent's output. The
// last lines of a service that never got ready go into the run's failure, through the workflow's
// history (an activity's result) and the read model: each line is cut, as a setup's are, so a
// service printing megabytes on one line cannot swell either (a Temporal payload has a hard limit).
// A pod's service lines (read through the Kubernetes API) are cut by the same rule.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { serviceFailureLines } from '../../core/environment-services.ts';
import { serviceLogTail, serviceSandbox } from '../../sandbox/backends/container/container-services.ts';
import type { ContainerCreateBody } from '../../sandbox/spec.ts';
import { DEFAULT_AGENT_IMAGE } from '../../platform/sandbox-settings.ts';
import { startContainerEngine, waitUntilRemoved, type TestContainerEngine } from '../support/container-engine.ts';
import { waitFor } from '../support/processes.ts';

let engine: TestContainerEngine;

test.before(async () => {
  engine = await startContainerEngine();
});
test.after.always(async () => {
  await engine?.stop();
});

test("a service's lines in its run's failure are cut, however long it prints them", async (t) => {
  const runId = randomUUID();
  const name = `svc-${serviceSandbox(runId, 'noisy')}`;
  // Three lines of a megabyte each, then a short one.
  const script = "for (let i = 0; i < 3; i++) console.log('x'.repeat(1_000_000)); console.log('done');";
  const body = {
    Image: DEFAULT_AGENT_IMAGE,
    Entrypoint: ['node', '-e', script],
    Cmd: [],
    Env: [],
    Labels: { 'svc.sandbox': serviceSandbox(runId, 'noisy') },
    HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'json-file', Config: { 'max-size': '64m' } } },
  } as unknown as ContainerCreateBody;
  const id = await engine.engine.create(name, body);
  try {
    await engine.engine.start(id);
    await waitFor(
      async () => (await engine.engine.inspect(name))?.State.Running === false || undefined,
      'the service ending',
      60_000,
    );
    const lines = await serviceLogTail(engine.address, runId, 'noisy');
    t.is(lines.at(-1), 'done', lines.map((line) => line.slice(0, 20)).join('\n'));
    t.is(lines.length, 4);
    for (const line of lines.slice(0, 3)) {
      t.true(line.startsWith('xxxx'));
      t.true(line.length <= 2001, `a line of ${line.length} characters`);
    }
  } finally {
    await engine.engine.remove(id);
    await waitUntilRemoved(engine.engine, name);
  }
});

test("a pod's service lines are kept as the engine's are: the last 20, each cut", (t) => {
  const lines = serviceFailureLines([...Array.from({ length: 30 }, (_, i) => `line ${i}`), 'y'.repeat(50_000)]);
  t.is(lines.length, 20);
  t.is(lines[0], 'line 11');
  t.is(lines.at(-1), `${'y'.repeat(2000)}…`);
});
