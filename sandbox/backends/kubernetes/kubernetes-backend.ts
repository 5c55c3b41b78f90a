// Whether this worker can run agents as pods: checked before a worker starts, and by `svc doctor --local`.
import type { KubernetesSettings } from '../../../platform/sandbox-settings.ts';
import { KubeApi, POD_LABELS } from './kube-api.ts';

/**
 * A worker refuses to start a Kubernetes backend it cannot use: it must know where pods reach it
 * (its gateways), and the API server must answer for the namespace. Answers the line start-up prints.
 */
export async function kubernetesBackendReady(settings: KubernetesSettings): Promise<string> {
  if (!settings.gatewayHost)
    throw new Error(
      'SVC_SANDBOX=kubernetes: set SVC_KUBERNETES_GATEWAY_HOST (or POD_IP from the downward API): ' +
        'the address pods reach this worker at',
    );
  // Each run's files are read and written as its own unprivileged uid: svc must be root.
  if (process.getuid?.() !== 0)
    throw new Error('SVC_SANDBOX=kubernetes needs svc to run as root (each run gets an unprivileged uid of its own)');
  let api: KubeApi;
  try {
    api = new KubeApi(settings.namespace, settings.kubeconfig);
    await api.list(`${POD_LABELS.managedBy}=svc`);
  } catch (error) {
    throw new Error(
      `SVC_SANDBOX=kubernetes: the Kubernetes API does not answer for namespace ${settings.namespace} ` +
        `(${(error as Error).message}); check KUBECONFIG or the worker's service account`,
    );
  }
  const gateway = settings.gatewayHost;
  return `sandbox: Kubernetes pods in namespace ${settings.namespace} on ${api.server} (gateway ${gateway})`;
}

/** One client per namespace and kubeconfig: loading a kubeconfig is not free, and admission asks often. */
const clients = new Map<string, KubeApi>();

/**
 * svc's pods the cluster has not started (admission's SVC_ADMISSION_PENDING_PODS); null when the API
 * server does not answer, which does not block a dispatch.
 */
export async function pendingPodCount(settings: KubernetesSettings): Promise<number | null> {
  try {
    const key = `${settings.namespace}\0${settings.kubeconfig ?? ''}`;
    let api = clients.get(key);
    if (!api) clients.set(key, (api = new KubeApi(settings.namespace, settings.kubeconfig)));
    const pods = await api.list(`${POD_LABELS.managedBy}=svc`);
    return pods.filter((pod) => pod.status?.phase === 'Pending').length;
  } catch {
    return null;
  }
}
