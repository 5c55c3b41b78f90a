// A preview on the Kubernetes backend: the server runs in a pod of the agent image on a copy of the
// run's workspace, listening on the pod's address; a ClusterIP Service per preview (owned by the
// pod) leads there, and svc's proxy reaches it with no Ingress. Teardown deletes both.
import test from 'ava';
import { startKubeCluster } from '../support/kube-node.ts';
import { waitFor } from '../support/processes.ts';
import { runWithTextPreview } from '../support/preview-fixture.ts';

test('a run on the Kubernetes backend gets its preview live in a pod behind its own Service', async (t) => {
  const { kube, env } = await startKubeCluster(t);
  const { svc, run } = await runWithTextPreview(t, env, {
    name: 'podded-preview',
    label: 'podded',
    text: 'from a pod',
    timeoutMs: 180_000,
  });
  const runId = run.id;
  t.is(run.previewState, 'live', JSON.stringify(run));
  t.is(run.previewPort, 8080, "a pod's preview keeps its own port: the Service's");

  const podName = `svc-${runId.replace(/_/g, '-')}-preview`;
  const pod = kube.created.find((manifest) => manifest.metadata?.name === podName);
  t.is(pod?.metadata?.labels?.['svc.dev/preview'], 'true', 'the one label the API may connect to');
  t.deepEqual(pod?.spec?.containers[0]?.ports, [{ name: 'preview', containerPort: 8080 }]);
  const service = kube.services.services.get(podName)?.service;
  t.truthy(service, 'a Service per preview');
  t.deepEqual(service!.spec!.selector, { 'svc.dev/sandbox': podName, 'svc.dev/preview': 'true' });
  t.is(service!.metadata!.ownerReferences?.[0]?.uid, kube.pods.get(podName)?.pod.metadata?.uid, 'owned by its pod');

  const login = await svc.request('POST', `/runs/${runId}/preview/login`, { body: {} });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  t.is(await (await fetch(login.body.url, { headers: { cookie } })).text(), 'podded: from a pod');
  t.is((await fetch(login.body.url)).status, 401, 'no cookie, no preview');

  t.like((await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} })).body, { status: 'torn-down' });
  await waitFor(async () => !kube.services.services.has(podName), 'the Service deleted', 60_000);
  await waitFor(async () => !kube.pods.has(podName), 'the preview pod deleted', 60_000);
});
