// The stand-in's Services (ClusterIP only): create (validated against the official schema and
// deploy/kubernetes/15-admission.yaml's policy), read, delete, and the garbage collector's deletion
// of a Service whose owner pod is deleted. Each gets a cluster IP of its own on the host's loopback
// (127.77.x.y) where a small forwarder plays kube-proxy: a connection to the IP and a port of the
// Service reaches a running pod its selector picks.
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Service } from 'kubernetes-models/v1/Service';

type Status = (code: number, reason: string, message: string) => unknown;
type Send = (code: number, body: unknown) => void;

interface StandInService {
  service: V1Service;
  servers: Server[];
  connections: Set<Socket>;
}

export class StandInServices {
  readonly services = new Map<string, StandInService>();
  readonly #namespace: string;
  readonly #pods: () => V1Pod[];
  #next = 1;

  constructor(namespace: string, pods: () => V1Pod[]) {
    this.#namespace = namespace;
    this.#pods = pods;
  }

  /** Serves `/api/v1/namespaces/<ns>/services[/<name>]`. */
  async handle(method: string, name: string | undefined, body: () => Promise<unknown>, send: Send, status: Status) {
    if (!name && method === 'POST') return this.#create((await body()) as V1Service, send, status);
    const entry = name ? this.services.get(name) : undefined;
    if (!entry) return send(404, status(404, 'NotFound', `services "${name}" not found`));
    if (method === 'GET') return send(200, entry.service);
    if (method === 'DELETE') {
      await this.#remove(name!);
      return send(200, entry.service);
    }
    send(405, status(405, 'MethodNotAllowed', `${method} is not served`));
  }

  /** The garbage collector: a deleted pod takes the Services it owns with it. */
  async collect(pod: V1Pod): Promise<void> {
    for (const [name, entry] of this.services)
      if (entry.service.metadata?.ownerReferences?.some((owner) => owner.uid === pod.metadata?.uid))
        await this.#remove(name);
  }

  async stop(): Promise<void> {
    for (const name of [...this.services.keys()]) await this.#remove(name);
  }

  async #create(manifest: V1Service, send: Send, status: Status): Promise<void> {
    try {
      new Service(manifest as ConstructorParameters<typeof Service>[0]).validate();
    } catch (error) {
      return send(422, status(422, 'Invalid', `Service is invalid: ${(error as Error).message}`));
    }
    const name = manifest.metadata?.name ?? '';
    if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63)
      return send(422, status(422, 'Invalid', `metadata.name "${name}" is not a DNS-1035 label`));
    if (this.services.has(name)) return send(409, status(409, 'AlreadyExists', `services "${name}" already exists`));
    // What deploy/kubernetes/15-admission.yaml admits in the run namespace.
    const selector = manifest.spec?.selector ?? {};
    if (
      (manifest.spec?.type ?? 'ClusterIP') !== 'ClusterIP' ||
      manifest.spec?.externalIPs?.length ||
      selector['svc.dev/preview'] !== 'true' ||
      !selector['svc.dev/sandbox']
    )
      return send(403, status(403, 'Forbidden', 'ValidatingAdmissionPolicy svc-preview-services denied the request'));
    const clusterIP = `127.77.${Math.floor(this.#next / 250)}.${(this.#next % 250) + 1}`;
    this.#next += 1;
    const service: V1Service = {
      ...manifest,
      metadata: { ...manifest.metadata, namespace: this.#namespace, uid: crypto.randomUUID() },
      spec: { ...manifest.spec, type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP] },
    };
    const connections = new Set<Socket>();
    const servers = await Promise.all(
      (service.spec!.ports ?? []).map((port) => this.#forward(clusterIP, port, service.spec!.selector!, connections)),
    );
    this.services.set(name, { service, servers, connections });
    send(201, service);
  }

  /** kube-proxy's part: the Service's IP and port lead to a running pod its selector picks. */
  async #forward(
    ip: string,
    { port, targetPort }: { port: number; targetPort?: number | string },
    selector: Record<string, string>,
    connections: Set<Socket>,
  ): Promise<Server> {
    const server = createServer((client) => {
      connections.add(client);
      client.once('close', () => connections.delete(client));
      const pod = this.#pods().find(
        (candidate) =>
          candidate.status?.phase === 'Running' &&
          candidate.status.podIP &&
          Object.entries(selector).every(([key, value]) => candidate.metadata?.labels?.[key] === value),
      );
      if (!pod) return void client.destroy();
      const upstream = connect(Number(targetPort ?? port), pod.status!.podIP!);
      client.pipe(upstream).pipe(client);
      upstream.once('error', () => client.destroy());
      client.once('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(port, ip, done);
    });
    return server;
  }

  async #remove(name: string): Promise<void> {
    const entry = this.services.get(name);
    this.services.delete(name);
    for (const server of entry?.servers ?? []) server.close();
    for (const connection of entry?.connections ?? []) connection.destroy();
  }
}
