// The "restricted" Pod Security Standard (kubernetes.io/docs/concepts/security/pod-security-standards),
// as the stand-in's admission checks it: what a namespace labelled
// pod-security.kubernetes.io/enforce=restricted would refuse.
import type { V1Pod } from '@kubernetes/client-node';

const ALLOWED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

export function restrictedViolations(pod: V1Pod): string[] {
  const spec = pod.spec;
  if (!spec) return ['no spec'];
  const problems: string[] = [];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) problems.push('host namespaces');
  for (const volume of spec.volumes ?? []) {
    const kinds = Object.keys(volume).filter((key) => key !== 'name');
    if (!kinds.every((kind) => ALLOWED_VOLUMES.includes(kind)))
      problems.push(`restricted volume types (${volume.name})`);
  }
  const podSeccomp = spec.securityContext?.seccompProfile?.type;
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    const context = container.securityContext ?? {};
    if (context.privileged) problems.push(`privileged (${container.name})`);
    if (context.allowPrivilegeEscalation !== false)
      problems.push(`allowPrivilegeEscalation != false (${container.name})`);
    if (!context.capabilities?.drop?.includes('ALL')) problems.push(`unrestricted capabilities (${container.name})`);
    if ((context.capabilities?.add ?? []).some((capability) => capability !== 'NET_BIND_SERVICE'))
      problems.push(`added capabilities (${container.name})`);
    if (!(context.runAsNonRoot ?? spec.securityContext?.runAsNonRoot))
      problems.push(`runAsNonRoot != true (${container.name})`);
    if ((context.runAsUser ?? spec.securityContext?.runAsUser) === 0) problems.push(`runAsUser=0 (${container.name})`);
    const seccomp = context.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') problems.push(`seccompProfile (${container.name})`);
    if (container.ports?.some((port) => port.hostPort)) problems.push(`hostPort (${container.name})`);
  }
  return problems;
}
