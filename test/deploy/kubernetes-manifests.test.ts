// deploy/kubernetes against the Kubernetes API's schema and against svc itself: the run namespace,
// labels, gateway ports and environment variables the manifests name must be the ones svc uses, or
// a cluster applies them cleanly and runs fail (or run pods are less isolated than they look).
import test from 'ava';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../platform/config.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import {
  DIR,
  MODELS,
  type Kind,
  parseErrors,
  docs,
  the,
  all,
  selects,
  unknownFields,
  worker,
  api,
  workerPod,
  apiPod,
  workerContainer,
  apiContainer,
  defaults,
  runNamespace,
  namespaceLabels,
  runPodLabels,
  WORKER_FIELDS,
  envOf,
  variable,
  files,
} from './manifests.ts';

test('every manifest parses and is valid against the Kubernetes API schema, with no unknown field', (t) => {
  t.deepEqual(parseErrors, []);
  t.true(docs.length > 0);
  const seen = new Set<string>();
  for (const { file, doc } of docs) {
    const Model = MODELS[doc.kind as Kind];
    if (!Model) {
      t.fail(`${file}: ${doc.kind} has no model here (add it to MODELS)`);
      continue;
    }
    t.is(doc.apiVersion, Model.apiVersion, `${file}: ${doc.kind}`);
    t.notThrows(() => new Model(doc as never).validate(), `${file}: ${doc.kind} ${doc.metadata?.name}`);
    t.deepEqual(unknownFields(doc, `V1${doc.kind}`, `${file}: ${doc.kind}`), []);
    const clusterScoped = ['Namespace', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
    if (!clusterScoped.includes(doc.kind))
      t.truthy(doc.metadata.namespace, `${file}: ${doc.kind} ${doc.metadata.name}`);
    const key = `${doc.kind}/${doc.metadata.namespace}/${doc.metadata.name}`;
    t.false(seen.has(key), `${key} twice`);
    seen.add(key);
  }
});

test('the README names every manifest, in the order they apply', (t) => {
  const readme = readFileSync(join(DIR, 'README.md'), 'utf8');
  const positions = files.map((file) => readme.indexOf(file));
  for (const [index, file] of files.entries()) t.true(positions[index]! >= 0, `${file} is not in the README`);
  t.true(positions.every((position, index) => index === 0 || position > positions[index - 1]!));
});

test("the run namespace is svc's default and admits only restricted pods", (t) => {
  t.is(runNamespace.metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  t.is(envOf(workerContainer, WORKER_FIELDS).SVC_KUBERNETES_NAMESPACE, defaults.namespace);
});

test('the worker manages pods in the run namespace and nothing else; the API has no Kubernetes rights', (t) => {
  const roles = all('Role');
  t.deepEqual(
    roles.map((role) => role.metadata?.namespace),
    [defaults.namespace],
  );
  const rules = roles[0]!.rules!.map((rule) => ({ ...rule, verbs: [...rule.verbs].sort() }));
  t.deepEqual(rules, [
    { apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'] },
    { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    { apiGroups: [''], resources: ['services'], verbs: ['create', 'delete', 'get'] },
  ]);
  const bindings = all('RoleBinding');
  t.is(bindings.length, 1);
  t.is(bindings[0]!.metadata?.namespace, defaults.namespace);
  t.deepEqual(bindings[0]!.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'Role',
    name: roles[0]!.metadata!.name!,
  });
  const account = workerPod.spec!.serviceAccountName!;
  t.deepEqual(bindings[0]!.subjects, [
    { kind: 'ServiceAccount', name: account, namespace: worker.metadata!.namespace },
  ]);
  t.is(the('ServiceAccount', account).metadata?.namespace, worker.metadata!.namespace);
  t.is(apiPod.spec!.automountServiceAccountToken, false);
  t.is(the('ServiceAccount', apiPod.spec!.serviceAccountName!).automountServiceAccountToken, false);
});

test('the worker runs the Kubernetes backend and gives its run pods a stable gateway address', (t) => {
  t.deepEqual(workerContainer.args, ['worker']);
  t.deepEqual(apiContainer.args, ['serve', '--no-worker']);
  t.is(variable(workerContainer, 'SVC_SANDBOX')?.value, 'kubernetes');
  t.is(variable(workerContainer, 'POD_IP')?.valueFrom?.fieldRef?.fieldPath, 'status.podIP');
  const env = envOf(workerContainer, WORKER_FIELDS);
  const settings = parseSandboxSettings(env);
  t.is(settings.mode, 'kubernetes');
  // The pod's DNS name through the StatefulSet's headless Service, published before readiness.
  const service = the('Service', worker.spec!.serviceName!);
  t.is(
    settings.kubernetes.gatewayHost,
    `svc-worker-0.${service.metadata!.name}.${service.metadata!.namespace}.svc.cluster.local`,
  );
  t.is(service.spec?.clusterIP, 'None');
  t.true(service.spec?.publishNotReadyAddresses);
  t.true(selects({ matchLabels: service.spec?.selector }, workerPod.metadata?.labels));
  t.true(selects(worker.spec!.selector, workerPod.metadata?.labels));
  t.true(selects(api.spec!.selector, apiPod.metadata?.labels));
  t.false(selects(worker.spec!.selector, apiPod.metadata?.labels));
  // The pods' policy and svc's gateways agree on the ports (and on the default, which a worker gets unset).
  t.deepEqual(settings.kubernetes.gatewayPorts, defaults.gatewayPorts);
});

test('run pods reach only the workers on the gateway ports, and DNS', (t) => {
  const { first, last } = defaults.gatewayPorts;
  const policies = all('NetworkPolicy').filter((policy) => policy.metadata?.namespace === defaults.namespace);
  const deny = policies.find((policy) => policy.metadata?.name === 'default-deny')!;
  t.deepEqual(deny.spec, { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  const applying = policies.filter((policy) => selects(policy.spec!.podSelector, runPodLabels));
  const previewOnly = policies.filter((policy) => !applying.includes(policy));
  t.deepEqual(
    previewOnly.map((policy) => policy.metadata?.name),
    ['preview-ingress'],
    'a policy of the run namespace misses run pods',
  );
  t.deepEqual(
    applying.flatMap((policy) => policy.spec!.ingress ?? []),
    [],
  );
  const egress = applying.flatMap((policy) => policy.spec!.egress ?? []);
  t.is(egress.length, 2);
  const [gateway, dns] = egress;
  t.deepEqual(gateway!.ports, [{ protocol: 'TCP', port: first, endPort: last }]);
  t.true(gateway!.to!.length > 0);
  for (const peer of gateway!.to!) {
    t.falsy(peer.ipBlock);
    t.true(selects(peer.namespaceSelector, namespaceLabels(worker.metadata!.namespace!)));
    t.true(selects(peer.podSelector, workerPod.metadata?.labels));
    t.false(selects(peer.podSelector, apiPod.metadata?.labels));
  }
  t.deepEqual(dns!.ports, [
    { protocol: 'UDP', port: 53 },
    { protocol: 'TCP', port: 53 },
  ]);
  t.deepEqual(dns!.to, [
    {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
      podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
    },
  ]);
});

test('workers admit run pods on the gateway ports only; the API admits its HTTP and preview ports', (t) => {
  const { first, last } = defaults.gatewayPorts;
  const namespace = worker.metadata!.namespace!;
  const policies = all('NetworkPolicy').filter((policy) => policy.metadata?.namespace === namespace);
  t.deepEqual(policies.find((policy) => policy.metadata?.name === 'default-deny-ingress')?.spec, {
    podSelector: {},
    policyTypes: ['Ingress'],
  });
  const toWorkers = policies
    .filter((policy) => selects(policy.spec!.podSelector, workerPod.metadata?.labels))
    .flatMap((policy) => policy.spec!.ingress ?? []);
  t.is(toWorkers.length, 1);
  t.deepEqual(toWorkers[0]!.ports, [{ protocol: 'TCP', port: first, endPort: last }]);
  for (const peer of toWorkers[0]!.from!) {
    t.true(selects(peer.namespaceSelector, namespaceLabels(defaults.namespace)));
    t.true(selects(peer.podSelector, runPodLabels));
  }
  const port = apiContainer.ports!.find((entry) => entry.name === 'http')!.containerPort;
  t.is(Number(envOf(apiContainer).SVC_PORT), port);
  const previewPort = apiContainer.ports!.find((entry) => entry.name === 'preview')!.containerPort;
  t.is(Number(envOf(apiContainer).SVC_PREVIEW_PORT), previewPort);
  const toApi = policies
    .filter((policy) => selects(policy.spec!.podSelector, apiPod.metadata?.labels))
    .flatMap((policy) => policy.spec!.ingress ?? []);
  t.deepEqual(
    toApi.flatMap((rule) => rule.ports),
    [
      { protocol: 'TCP', port },
      { protocol: 'TCP', port: previewPort },
    ],
  );
  // The workers' callback proxies reach the API through its Service.
  const service = the('Service', 'svc-api');
  t.true(selects({ matchLabels: service.spec?.selector }, apiPod.metadata?.labels));
  t.is(service.spec!.ports![0]!.targetPort, 'http');
  t.is(
    envOf(workerContainer, WORKER_FIELDS).SVC_API_URL,
    `http://${service.metadata!.name}:${service.spec!.ports![0]!.port}`,
  );
  t.like(service.spec!.ports![1], { name: 'preview', targetPort: 'preview' }, 'browsers reach the preview proxy too');
  // The API answers to the Service's name the callback proxies send as Host (else 421 misdirected_request).
  const apiHost = new URL(envOf(workerContainer, WORKER_FIELDS).SVC_API_URL!).hostname;
  t.true(loadConfig(envOf(apiContainer)).allowedHosts.includes(apiHost), apiHost);
});

test('the worker is root with only the capabilities setpriv, chown and tar of run files need', (t) => {
  const context = workerContainer.securityContext!;
  t.is(context.runAsUser, 0);
  t.false(context.allowPrivilegeEscalation);
  t.falsy(context.privileged);
  t.deepEqual(context.capabilities?.drop, ['ALL']);
  const needed = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETUID'];
  t.deepEqual([...(context.capabilities?.add ?? [])].sort(), needed);
  // All within what the svc namespace's "baseline" Pod Security level admits.
  t.is(namespaceLabels(worker.metadata!.namespace!)['pod-security.kubernetes.io/enforce'], 'baseline');
  const baseline =
    'AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID';
  t.true(needed.every((capability) => `${baseline} SYS_CHROOT`.split(' ').includes(capability)));
  t.deepEqual(apiContainer.securityContext?.capabilities, { drop: ['ALL'] });
  t.false(apiContainer.securityContext?.allowPrivilegeEscalation);
});

test('each worker keeps its data on a claim of its own and shares the project clones with the API', (t) => {
  const workerEnv = envOf(workerContainer, WORKER_FIELDS);
  const apiEnv = envOf(apiContainer);
  t.is(workerEnv.SVC_DATA_DIR, apiEnv.SVC_DATA_DIR);
  t.is(workerEnv.SVC_PROJECTS_DIR, apiEnv.SVC_PROJECTS_DIR);
  const mountAt = (container: IContainer, path: string) => container.volumeMounts?.find((m) => m.mountPath === path);
  const dataMount = mountAt(workerContainer, workerEnv.SVC_DATA_DIR!);
  t.deepEqual(
    worker.spec!.volumeClaimTemplates?.map((claim) => claim.metadata?.name),
    [dataMount?.name],
  );
  const claimOf = (pod: typeof workerPod, container: IContainer) => {
    const mount = mountAt(container, workerEnv.SVC_PROJECTS_DIR!);
    const volume = pod.spec!.volumes?.find((entry) => entry.name === mount?.name);
    return { claim: volume?.persistentVolumeClaim?.claimName, subPath: mount?.subPath };
  };
  const shared = claimOf(workerPod, workerContainer);
  t.deepEqual(claimOf(apiPod, apiContainer), shared);
  t.deepEqual(the('PersistentVolumeClaim', shared.claim!).spec?.accessModes, ['ReadWriteMany']);
});

test('every variable the manifests set is one svc reads, and the required ones cannot be left out', (t) => {
  const runtimes = readdirSync('activities/runtimes').map((file) => join('activities/runtimes', file));
  const sources = [
    'platform/config.ts',
    'platform/sandbox-settings.ts',
    'platform/preview-settings.ts',
    // The model credentials each runtime takes from svc's environment.
    'core/agent-capabilities.ts',
    ...runtimes,
  ]
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const containers = [apiContainer, workerContainer];
  const expanded = containers.flatMap((container) => container.env ?? []).map((entry) => entry.value ?? '');
  const names = [
    ...containers.flatMap((container) => (container.env ?? []).map((entry) => entry.name)),
    ...all('ConfigMap').flatMap((map) => Object.keys(map.data ?? {})),
  ];
  for (const name of new Set(names)) {
    const used = new RegExp(`\\b${name}\\b`).test(sources) || expanded.some((value) => value.includes(`$(${name})`));
    t.true(used, `${name} is read nowhere in svc`);
  }
  for (const container of containers) {
    for (const required of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'SVC_API_TOKEN']) {
      const from = variable(container, required)?.valueFrom;
      t.truthy(from?.configMapKeyRef ?? from?.secretKeyRef, `${container.name}: ${required}`);
      t.falsy(from?.configMapKeyRef?.optional ?? from?.secretKeyRef?.optional, `${container.name}: ${required}`);
    }
    for (const entry of container.env ?? [])
      if (entry.valueFrom?.secretKeyRef) t.is(entry.valueFrom.secretKeyRef.name, 'svc-secrets');
    const config = loadConfig(envOf(container, WORKER_FIELDS));
    t.is(config.temporalAddress, the('ConfigMap', 'svc-config').data!.TEMPORAL_ADDRESS);
    t.is(config.databaseUrl, 'secret-DATABASE_URL');
  }
  t.is(loadConfig(envOf(apiContainer)).host, '0.0.0.0');
  t.is(loadConfig(envOf(apiContainer)).preview.proxyPort, 8081);
});
