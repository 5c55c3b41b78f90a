// deploy/kubernetes for previews (docs/previews.md): a preview's pod is the one run pod anything may
// reach, and only svc's own pods (the API's proxy, the worker's readiness probe); the Services the
// worker may create in the run namespace are held by admission to what a preview needs.
import test from 'ava';
import { POD_LABELS } from '../../sandbox/backends/kubernetes/kube-api.ts';
import {
  all,
  selects,
  api,
  workerPod,
  apiPod,
  defaults,
  namespaceLabels,
  runPodLabels,
  previewPodLabels,
} from './manifests.ts';

test("a preview's pod admits svc's pods alone (the proxy, the probe), and has every egress rule of a run pod", (t) => {
  const policies = all('NetworkPolicy').filter((policy) => policy.metadata?.namespace === defaults.namespace);
  const applying = policies.filter((policy) => selects(policy.spec!.podSelector, previewPodLabels));
  t.is(applying.length, policies.length, 'a policy of the run namespace misses preview pods');
  const ingress = applying.flatMap((policy) => policy.spec!.ingress ?? []);
  t.is(ingress.length, 1);
  t.falsy(ingress[0]!.ports, 'any port: the project names its own');
  const peers = ingress[0]!.from!;
  for (const peer of peers) {
    t.falsy(peer.ipBlock);
    t.true(selects(peer.namespaceSelector, namespaceLabels(api.metadata!.namespace!)));
    t.false(selects(peer.podSelector, runPodLabels));
    t.false(selects(peer.podSelector, previewPodLabels));
  }
  // The API's proxy, and the worker's readiness probe (awaitPreviewReady runs on a worker).
  t.true(peers.some((peer) => selects(peer.podSelector, apiPod.metadata?.labels)));
  t.true(peers.some((peer) => selects(peer.podSelector, workerPod.metadata?.labels)));
});

test("Services in the run namespace are held by admission to what a preview's needs", (t) => {
  const [policy] = all('ValidatingAdmissionPolicy');
  const [binding] = all('ValidatingAdmissionPolicyBinding');
  t.truthy(policy && binding);
  t.is(binding!.spec!.policyName, policy!.metadata!.name!);
  t.deepEqual(binding!.spec!.validationActions, ['Deny']);
  t.true(selects(binding!.spec!.matchResources!.namespaceSelector, namespaceLabels(defaults.namespace)));
  t.is(policy!.spec!.failurePolicy, 'Fail');
  t.deepEqual(policy!.spec!.matchConstraints!.resourceRules![0]!.resources, ['services']);
  const expressions = policy!.spec!.validations!.map((validation) => validation.expression).join('\n');
  t.regex(expressions, /object\.spec\.type == 'ClusterIP'/);
  t.regex(expressions, /externalIPs/);
  // The selector the policy demands is the one svc's preview Services have (preview-service.ts).
  for (const label of [POD_LABELS.preview, POD_LABELS.sandbox])
    t.true(expressions.includes(`'${label}' in object.spec.selector`));
});
