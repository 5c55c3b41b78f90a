// The reconciler's sweep of the Kubernetes backend (sandbox-sweep.ts): pods of ended runs.
import type { KubernetesSettings } from '../../../platform/sandbox-settings.ts';
import type { ReadModel } from '../../../db/orm.ts';
import { sweepLeftovers } from '../../host/sandbox-sweep.ts';
import { KubeApi, POD_LABELS, RUN_ANNOTATION } from './kube-api.ts';

/** Deletes the pods of runs that ended before `cutoff`; answers their names. */
export async function sweepEndedPods(settings: KubernetesSettings, readModel: ReadModel, cutoff: Date) {
  const api = new KubeApi(settings.namespace, settings.kubeconfig);
  return await sweepLeftovers(
    async () =>
      (await api.list(`${POD_LABELS.managedBy}=svc`)).map((pod) => ({
        id: pod.metadata!.name!,
        sandbox: pod.metadata!.annotations?.[RUN_ANNOTATION] ?? '',
      })),
    (name) => api.remove(name),
    readModel,
    cutoff,
  );
}
