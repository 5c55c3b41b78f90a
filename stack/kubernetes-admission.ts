// The Kubernetes backend's half of admission at the API's door (api/services/admission.ts): the
// pods of svc's the cluster has not started, and which pod settings projects may name. Wired here,
// in the composition root: the API imports no sandbox code.
import type { KubernetesAdmission } from '../api/services/admission.ts';
import type { KubernetesSettings } from '../platform/sandbox-settings.ts';
import { KubeApi, POD_LABELS } from '../activities/sandbox/kubernetes/kube-api.ts';
import { disallowedPodSettings } from '../activities/sandbox/kubernetes/pod-launch.ts';

export function kubernetesAdmission(settings: KubernetesSettings): KubernetesAdmission {
  let kube: KubeApi | null = null;
  return {
    settings,
    async pendingPods() {
      try {
        kube ??= new KubeApi(settings.namespace, settings.kubeconfig);
        const pods = await kube.list(`${POD_LABELS.managedBy}=svc`);
        return pods.filter((pod) => pod.status?.phase === 'Pending').length;
      } catch {
        return null;
      }
    },
    disallowedPodSettings: (project) => disallowedPodSettings(settings.podDefaults, project),
  };
}
