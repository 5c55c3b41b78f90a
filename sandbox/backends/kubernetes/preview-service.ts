// A preview on the Kubernetes backend: its server listens on its pod's address, and a ClusterIP
// Service per preview leads there, so svc's proxy reaches it from anywhere in the cluster with no
// Ingress per run. The Service is owned by the pod: deleting the pod (svc's stop, the sweep, an
// operator) has the cluster's garbage collector delete the Service too.
import type { V1Service } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubernetesSettings } from '../../../platform/sandbox-settings.ts';
import { KubeApi, POD_LABELS, RUN_ANNOTATION } from './kube-api.ts';
import { podName } from './pod-launch.ts';

/** The Service of a preview's sandbox (`<runId>-preview`): named as its pod, a DNS-1035 label. */
export function previewServiceName(sandboxName: string): string {
  return podName(sandboxName);
}

/**
 * Creates the Service in front of the preview's pod once the pod exists (its supervisor creates it;
 * its uid owns the Service). Answers the Service's cluster IP; a retry finds the Service there.
 */
export async function exposePreviewPod(
  settings: KubernetesSettings,
  sandboxName: string,
  port: number,
  timeoutMs = 60_000,
): Promise<{ host: string } | { error: string }> {
  const api = new KubeApi(settings.namespace, settings.kubeconfig);
  const name = podName(sandboxName);
  let uid: string | undefined;
  for (const deadline = Date.now() + timeoutMs; !uid && Date.now() < deadline;) {
    uid = (await api.read(name))?.metadata?.uid;
    if (!uid) await sleep(200);
  }
  if (!uid) return { error: `the preview's pod ${name} was not created within ${timeoutMs / 1000} s` };
  const manifest: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: previewServiceName(sandboxName),
      namespace: settings.namespace,
      labels: { [POD_LABELS.managedBy]: 'svc', [POD_LABELS.sandbox]: name },
      annotations: { [RUN_ANNOTATION]: sandboxName },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }],
    },
    spec: {
      type: 'ClusterIP',
      selector: { [POD_LABELS.sandbox]: name, [POD_LABELS.preview]: 'true' },
      ports: [{ name: 'preview', protocol: 'TCP', port, targetPort: port }],
    },
  };
  let service = await api.createService(manifest);
  // One left by an earlier pod of this name (a retry that started the preview again) is not this one's.
  if (service.metadata?.ownerReferences?.[0]?.uid !== uid) {
    await api.removeService(manifest.metadata!.name!);
    service = await api.createService(manifest);
    if (service.metadata?.ownerReferences?.[0]?.uid !== uid)
      return { error: `the Service ${manifest.metadata!.name} belongs to another pod of that name` };
  }
  const host = service.spec?.clusterIP;
  if (!host || host === 'None') return { error: `the Service ${name} was given no cluster IP` };
  return { host };
}

/** Deletes the preview's Service (gone already is fine: the pod's deletion takes it along). */
export async function removePreviewService(settings: KubernetesSettings, sandboxName: string): Promise<void> {
  await new KubeApi(settings.namespace, settings.kubeconfig).removeService(previewServiceName(sandboxName));
}
