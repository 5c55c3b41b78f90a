// The stand-in cluster's node and credentials: the pods' internal network with deploy/kubernetes's
// NetworkPolicy enforced as a CNI would (iptables), the API's TLS certificate and kubeconfig, and a
// whole cluster for a test (a Podman engine with the stand-in API over it).
import type { ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import { startContainerEngine } from './container-engine.ts';
import { KubeStandIn } from './kube-stand-in.ts';

/**
 * The pods' network: internal (no route out), the node reachable from it only on the gateway
 * ports, as the runs' NetworkPolicy allows. Idempotent (rules are checked before they are added).
 */
export function podNetwork(network: string, subnetPrefix: string): void {
  try {
    execFileSync('podman', ['network', 'exists', network], { stdio: 'ignore' });
  } catch {
    const create = ['network', 'create', '--internal', '--subnet', `${subnetPrefix}.0/24`, network];
    execFileSync('podman', create, { stdio: 'ignore' });
  }
  const { first, last } = parseSandboxSettings({}).kubernetes.gatewayPorts;
  const rules = [
    // Answers to what the host opened (svc's proxy to a preview's Service), as a policy allows them.
    ['-s', `${subnetPrefix}.0/24`, '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'],
    ['-s', `${subnetPrefix}.0/24`, '-p', 'tcp', '--dport', `${first}:${last}`, '-j', 'ACCEPT'],
    ['-s', `${subnetPrefix}.0/24`, '-j', 'DROP'],
  ];
  for (const [index, rule] of rules.entries()) {
    try {
      execFileSync('iptables', ['-C', 'INPUT', ...rule], { stdio: 'ignore' });
    } catch {
      execFileSync('iptables', ['-I', 'INPUT', String(index + 1), ...rule], { stdio: 'ignore' });
    }
  }
}

/** An API server speaks TLS (client-node refuses plain HTTP): `key.pem` and `cert.pem` for 127.0.0.1 in `dir`. */
export function tlsCertificate(dir: string): void {
  const subject = ['-subj', '/CN=kube-stand-in', '-addext', 'subjectAltName=IP:127.0.0.1'];
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  const files = ['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')];
  execFileSync('openssl', ['req', '-x509', ...key, ...subject, ...files], { stdio: 'ignore' });
}

/** A kubeconfig for the stand-in: its address, its certificate as the authority, a bearer token. */
export function writeKubeconfig(
  path: string,
  api: { port: number; dir: string; token: string; namespace: string },
): void {
  const authority = readFileSync(join(api.dir, 'cert.pem')).toString('base64');
  const server = `https://127.0.0.1:${api.port}`;
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'stand-in', cluster: { server, 'certificate-authority-data': authority } }],
      users: [{ name: 'svc', user: { token: api.token } }],
      contexts: [{ name: 'stand-in', context: { cluster: 'stand-in', user: 'svc', namespace: api.namespace } }],
      'current-context': 'stand-in',
    }),
  );
}

/** A Podman engine and the stand-in API over it, stopped with the test; `env` points a stack at them. */
export async function startKubeCluster(t: ExecutionContext) {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const kube = new KubeStandIn({ engine: engine.address });
  await kube.start();
  t.teardown(() => kube.stop());
  return { kube, env: kubernetesEnv(kube) };
}

/** What a stack needs to run its agents as pods of this stand-in. */
export function kubernetesEnv(kube: KubeStandIn): Record<string, string> {
  return { SVC_SANDBOX: 'kubernetes', KUBECONFIG: kube.kubeconfig, SVC_KUBERNETES_GATEWAY_HOST: kube.gatewayHost };
}
