// deploy/kubernetes loaded once for its tests: every document with its file, each kind's model
// (kubernetes-models, from the official schema), the objects the tests look at, and the helpers
// that read them as the API server and kubelet would (selectors, environments).
import * as kube from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { ValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import { ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { POD_LABELS } from '../../sandbox/backends/kubernetes/kube-api.ts';
import { podName } from '../../sandbox/backends/kubernetes/pod-launch.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';

export const DIR = 'deploy/kubernetes';
export const MODELS = {
  Namespace,
  ServiceAccount,
  Role,
  RoleBinding,
  ConfigMap,
  PersistentVolumeClaim,
  NetworkPolicy,
  Service,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  Deployment,
  StatefulSet,
};
export type Kind = keyof typeof MODELS;
export type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
export type Selector = { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined;

export const files = readdirSync(DIR)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
export const parseErrors: string[] = [];
export const docs = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((document) => {
    parseErrors.push(...document.errors.map((error) => `${file}: ${error.message}`));
    return { file, doc: document.toJS() as Doc };
  }),
);

/** The one object of that kind and name, as its model (undefined fields stay undefined). */
export function the<K extends Kind>(kind: K, name: string): InstanceType<(typeof MODELS)[K]> {
  const found = docs.filter(({ doc }) => doc.kind === kind && doc.metadata?.name === name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind} named ${name} in ${DIR}`);
  return new MODELS[kind](found[0]!.doc as never) as InstanceType<(typeof MODELS)[K]>;
}
export const all = <K extends Kind>(kind: K) =>
  docs
    .filter(({ doc }) => doc.kind === kind)
    .map(({ doc }) => new MODELS[kind](doc as never) as InstanceType<(typeof MODELS)[K]>);

/** A selector as the API server applies it; matchExpressions are not used here, so they never match. */
export function selects(selector: Selector, labels: Record<string, string> | undefined): boolean {
  if (!selector || selector.matchExpressions?.length) return false;
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
}

/** Fields the API server would drop (a typo: `endport`), by client-node's models of each type. */
export function unknownFields(value: unknown, type: string, path: string): string[] {
  const array = /^Array<(.+)>$/.exec(type);
  if (array)
    return Array.isArray(value) ? value.flatMap((item, i) => unknownFields(item, array[1]!, `${path}[${i}]`)) : [];
  const model = (kube as Record<string, unknown>)[type] as {
    getAttributeTypeMap?: () => { baseName: string; type: string }[];
  };
  if (!model?.getAttributeTypeMap || typeof value !== 'object' || value === null) return [];
  const attributes = model.getAttributeTypeMap();
  return Object.entries(value).flatMap(([key, child]) => {
    const attribute = attributes.find((entry) => entry.baseName === key);
    return attribute ? unknownFields(child, attribute.type, `${path}.${key}`) : [`${path}.${key}`];
  });
}

export const worker = the('StatefulSet', 'svc-worker');
export const api = the('Deployment', 'svc-api');
export const workerPod = worker.spec!.template;
export const apiPod = api.spec!.template;
export const workerContainer = workerPod.spec!.containers[0]!;
export const apiContainer = apiPod.spec!.containers[0]!;
export const defaults = parseSandboxSettings({}).kubernetes;
export const runNamespace = the('Namespace', defaults.namespace);
export const namespaceLabels = (name: string): Record<string, string> => ({
  ...the('Namespace', name).metadata?.labels,
  'kubernetes.io/metadata.name': name,
});
/** The labels svc puts on a run's pod (pod-launch.ts). */
export const runPodLabels = { [POD_LABELS.managedBy]: 'svc', [POD_LABELS.sandbox]: podName('run_0123456789ab') };
/** A preview's pod: a run pod with the preview label. */
export const previewPodLabels = {
  ...runPodLabels,
  [POD_LABELS.sandbox]: podName('run_0123456789ab-preview'),
  [POD_LABELS.preview]: 'true',
};
export const WORKER_FIELDS: Record<string, string> = { 'metadata.name': 'svc-worker-0', 'status.podIP': '10.1.2.3' };

/** A container's environment as the kubelet builds it; required Secret keys become placeholders. */
export function envOf(container: IContainer, fields: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? [])
    if (source.configMapRef) Object.assign(env, the('ConfigMap', source.configMapRef.name!).data);
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (variable.value !== undefined)
      env[variable.name] = variable.value.replace(/\$\((\w+)\)/g, (whole, name: string) => env[name] ?? whole);
    else if (from?.fieldRef) env[variable.name] = fields[from.fieldRef.fieldPath] ?? '';
    else if (from?.configMapKeyRef)
      env[variable.name] = the('ConfigMap', from.configMapKeyRef.name!).data![from.configMapKeyRef.key]!;
    else if (from?.secretKeyRef && !from.secretKeyRef.optional) env[variable.name] = `secret-${from.secretKeyRef.key}`;
  }
  return env;
}
export const variable = (container: IContainer, name: string) => container.env?.find((entry) => entry.name === name);
