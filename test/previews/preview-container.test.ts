// A preview on the container backend: the same door (it connects out through the socket directory
// bound into the container) and the same proxy; the preview runs in a container of the agent image
// on the run's workspace, and teardown removes the container.
import test from 'ava';
import { startContainerEngine, waitUntilRemoved } from '../support/container-engine.ts';
import { runWithTextPreview } from '../support/preview-fixture.ts';

test('a run on the container backend gets its preview live in a container, reached through the proxy', async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const { svc, run } = await runWithTextPreview(t, engine.env, {
    name: 'boxed-preview',
    label: 'boxed',
    text: 'from a container',
    timeoutMs: 120_000,
  });
  const runId = run.id;
  t.is(run.previewState, 'live', JSON.stringify(run));
  const login = await svc.request('POST', `/runs/${runId}/preview/login`, { body: {} });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  t.is(await (await fetch(login.body.url, { headers: { cookie } })).text(), 'boxed: from a container');
  t.like((await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} })).body, { status: 'torn-down' });
  await waitUntilRemoved(engine.engine, `svc-${runId}-preview`, 30_000);
});
