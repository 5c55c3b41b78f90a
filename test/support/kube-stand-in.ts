// A stand-in for the few Kubernetes API endpoints svc calls (no API server can be installed here):
// Pods in one namespace — create, read, list by label, watch, a JSON patch of activeDeadlineSeconds,
// delete, and a container's log with timestamps — and ClusterIP Services (kube-services.ts). Every manifest
// is validated against the official OpenAPI schema (npm kubernetes-models, generated from it) and
// the "restricted" Pod Security Standard, as an API server with that admission would; each pod's
// container runs for real on Podman (kube-pods.ts). Tests can evict a pod, make one vanish, and halt the API.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { Pod } from 'kubernetes-models/v1/Pod';
import { StandInKubelet, type StandInPod } from './kube-pods.ts';
import { StandInServices } from './kube-services.ts';
import { podNetwork, tlsCertificate, writeKubeconfig } from './kube-node.ts';
import { restrictedViolations } from './pod-security.ts';

const NETWORK = 'svc-kube-stand-in';
const SUBNET_PREFIX = '10.89.77';

export interface KubeStandInOptions {
  engine: string;
  namespace?: string;
  secrets?: Record<string, Record<string, string>>;
}

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});

export class KubeStandIn {
  readonly namespace: string;
  readonly token = 'stand-in-token';
  /** The host's address on the pods' network: where pods reach the workers' gateways. */
  readonly gatewayHost = `${SUBNET_PREFIX}.1`;
  readonly pods = new Map<string, StandInPod>();
  /** Every manifest the API accepted, in order. */
  readonly created: V1Pod[] = [];
  readonly #dir = mkdtempSync(join(tmpdir(), 'svc-kube-'));
  readonly #kubelet: StandInKubelet;
  readonly services: StandInServices;
  readonly #watchers = new Set<{ name: string | null; send: (type: string, pod: V1Pod) => void }>();
  #server: Server | null = null;
  #port = 0;
  #beat: NodeJS.Timeout | undefined;
  #held: StandInPod[] | null = null;

  constructor(options: KubeStandInOptions) {
    this.namespace = options.namespace ?? 'svc-runs';
    this.#kubelet = new StandInKubelet(options.engine, NETWORK, options.secrets ?? {});
    this.services = new StandInServices(this.namespace, () => [...this.pods.values()].map((entry) => entry.pod));
  }

  /** A kubeconfig file for this API (KUBECONFIG). */
  get kubeconfig(): string {
    return join(this.#dir, 'kubeconfig.json');
  }

  async start(): Promise<void> {
    podNetwork(NETWORK, SUBNET_PREFIX);
    tlsCertificate(this.#dir);
    await this.listen();
    writeKubeconfig(this.kubeconfig, {
      port: this.#port,
      dir: this.#dir,
      token: this.token,
      namespace: this.namespace,
    });
    this.#beat = setInterval(() => void this.#refresh(), 250);
  }

  async listen(): Promise<void> {
    const tls = { key: readFileSync(join(this.#dir, 'key.pem')), cert: readFileSync(join(this.#dir, 'cert.pem')) };
    const server = createServer(tls, (request, response) => {
      this.#handle(request, response).catch((error: Error) =>
        this.#send(response, 500, status(500, 'InternalError', error.message)),
      );
    });
    await new Promise<void>((done) => server.listen(this.#port, '127.0.0.1', done));
    this.#port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Stops answering (the API server is down); pods run on. */
  async halt(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const watcher of this.#watchers) this.#watchers.delete(watcher);
    server?.closeAllConnections();
    await new Promise((done) => server?.close(done));
  }

  async stop(): Promise<void> {
    clearInterval(this.#beat);
    await this.halt();
    for (const entry of this.pods.values()) await this.#kubelet.remove(entry);
    await this.services.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** The kubelet evicts a pod (node pressure): its container is stopped, the pod is Failed/Evicted. */
  async evict(name: string, message = 'The node was low on resource: memory.'): Promise<void> {
    const entry = this.pods.get(name);
    if (!entry) throw new Error(`no pod ${name}`);
    await this.#kubelet.stop(entry, 'Evicted', message);
    this.#notify('MODIFIED', entry);
  }

  /** A pod deleted behind svc's back (an operator, a node's loss). */
  async vanish(name: string): Promise<void> {
    const entry = this.pods.get(name);
    if (!entry) throw new Error(`no pod ${name}`);
    this.pods.delete(name);
    await this.#kubelet.remove(entry);
    await this.services.collect(entry.pod);
    this.#notify('DELETED', entry);
  }

  async #refresh(): Promise<void> {
    for (const entry of this.pods.values()) if (await this.#kubelet.refresh(entry)) this.#notify('MODIFIED', entry);
  }

  #notify(type: string, entry: StandInPod): void {
    for (const watcher of this.#watchers)
      if (!watcher.name || watcher.name === entry.pod.metadata!.name) watcher.send(type, entry.pod);
  }

  #send(response: ServerResponse, code: number, body: unknown): void {
    if (response.headersSent) return void response.destroy();
    response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  async #body(request: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.headers.authorization !== `Bearer ${this.token}`)
      return this.#send(response, 401, status(401, 'Unauthorized', 'Unauthorized'));
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const service = /^\/api\/v1\/namespaces\/([^/]+)\/services(?:\/([^/]+))?$/.exec(url.pathname);
    if (service && service[1] === this.namespace)
      return this.services.handle(
        request.method ?? 'GET',
        service[2],
        () => this.#body(request),
        (code, body) => this.#send(response, code, body),
        status,
      );
    const match = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?(\/log)?$/.exec(url.pathname);
    if (!match || match[1] !== this.namespace)
      return this.#send(response, 404, status(404, 'NotFound', `${url.pathname} is not served by the stand-in`));
    const [, , name, log] = match;
    if (!name && request.method === 'POST') return this.#create(response, await this.#body(request));
    if (!name && request.method === 'GET') return this.#list(url, response);
    const entry = this.pods.get(name!);
    if (!entry) return this.#send(response, 404, status(404, 'NotFound', `pods "${name}" not found`));
    if (log) return this.#log(entry, url, response);
    if (request.method === 'GET') return this.#send(response, 200, entry.pod);
    if (request.method === 'PATCH') return this.#patch(entry, response, await this.#body(request));
    if (request.method === 'DELETE') {
      this.pods.delete(name!);
      // A delete's grace period (svc deletes with 0, once the pod has ended) bounds the kubelet's stop.
      const grace = url.searchParams.get('gracePeriodSeconds');
      await this.#kubelet.stop(entry, 'Deleted', 'deleted', grace === null ? undefined : Number(grace));
      await this.#kubelet.remove(entry);
      await this.services.collect(entry.pod);
      this.#notify('DELETED', entry);
      return this.#send(response, 200, entry.pod);
    }
    this.#send(response, 405, status(405, 'MethodNotAllowed', `${request.method} is not served`));
  }

  async #create(response: ServerResponse, body: unknown): Promise<void> {
    const manifest = body as V1Pod;
    try {
      new Pod(manifest as ConstructorParameters<typeof Pod>[0]).validate();
    } catch (error) {
      return this.#send(response, 422, status(422, 'Invalid', `Pod is invalid: ${(error as Error).message}`));
    }
    const name = manifest.metadata?.name;
    if (!name || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 253)
      return this.#send(response, 422, status(422, 'Invalid', `metadata.name "${name}" is not a DNS-1123 subdomain`));
    const violations = restrictedViolations(manifest);
    if (violations.length)
      return this.#send(
        response,
        403,
        status(403, 'Forbidden', `violates PodSecurity "restricted:latest": ${violations.join('; ')}`),
      );
    if (this.pods.has(name))
      return this.#send(response, 409, status(409, 'AlreadyExists', `pods "${name}" already exists`));
    const pod: V1Pod = {
      ...manifest,
      metadata: {
        ...manifest.metadata,
        namespace: this.namespace,
        uid: crypto.randomUUID(),
        creationTimestamp: new Date(),
      },
      status: { phase: 'Pending' },
    };
    const entry: StandInPod = { pod, containerId: null, cgroup: null, volumes: join(this.#dir, name) };
    this.pods.set(name, entry);
    this.created.push(structuredClone(manifest));
    this.#send(response, 201, pod);
    if (this.#held) return void this.#held.push(entry);
    await this.#schedule(entry);
  }

  async #schedule(entry: StandInPod): Promise<void> {
    await this.#kubelet.start(entry);
    this.#notify('MODIFIED', entry);
    this.#armDeadline(entry);
  }

  /** From now on pods stay Pending (no node has room) until `schedule()`. */
  holdScheduling(): void {
    this.#held ??= [];
  }

  /** Schedules the held pods, and every pod from now on. */
  async schedule(): Promise<void> {
    const held = this.#held ?? [];
    this.#held = null;
    for (const entry of held) if (this.pods.get(entry.pod.metadata!.name!) === entry) await this.#schedule(entry);
  }

  #armDeadline(entry: StandInPod): void {
    clearTimeout(entry.deadlineTimer);
    const seconds = entry.pod.spec?.activeDeadlineSeconds;
    if (seconds === undefined) return;
    const started = Date.parse(String(entry.pod.status?.startTime ?? entry.pod.metadata!.creationTimestamp));
    const wait = Math.max(0, started + seconds * 1000 - Date.now());
    entry.deadlineTimer = setTimeout(() => {
      void this.#kubelet
        .stop(entry, 'DeadlineExceeded', 'Pod was active on the node longer than the specified deadline')
        .then(() => this.#notify('MODIFIED', entry));
    }, wait);
    entry.deadlineTimer.unref();
  }

  async #patch(entry: StandInPod, response: ServerResponse, body: unknown): Promise<void> {
    const operations = Array.isArray(body) ? (body as { op: string; path: string; value: unknown }[]) : [];
    for (const operation of operations) {
      if (
        !['add', 'replace'].includes(operation.op) ||
        operation.path !== '/spec/activeDeadlineSeconds' ||
        typeof operation.value !== 'number' ||
        operation.value < 1
      )
        return this.#send(
          response,
          422,
          status(
            422,
            'Invalid',
            `spec: Forbidden: pod updates may not change fields other than activeDeadlineSeconds…`,
          ),
        );
      entry.pod = { ...entry.pod, spec: { ...entry.pod.spec!, activeDeadlineSeconds: operation.value } };
    }
    this.#armDeadline(entry);
    this.#send(response, 200, entry.pod);
  }

  #list(url: URL, response: ServerResponse): void {
    const field = /^metadata\.name=(.+)$/.exec(url.searchParams.get('fieldSelector') ?? '')?.[1] ?? null;
    const labels = (url.searchParams.get('labelSelector') ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('='));
    const selected = [...this.pods.values()]
      .map((entry) => entry.pod)
      .filter(
        (pod) =>
          (!field || pod.metadata!.name === field) &&
          labels.every(([key, value]) => pod.metadata!.labels?.[key!] === value),
      );
    if (url.searchParams.get('watch') !== 'true')
      return this.#send(response, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: selected });
    response.writeHead(200, { 'content-type': 'application/json' });
    const send = (type: string, pod: V1Pod) => response.write(`${JSON.stringify({ type, object: pod })}\n`);
    for (const pod of selected) send('ADDED', pod);
    const watcher = { name: field, send };
    this.#watchers.add(watcher);
    response.once('close', () => this.#watchers.delete(watcher));
  }

  #log(entry: StandInPod, url: URL, response: ServerResponse): void {
    const names = entry.pod.spec!.containers.map((container) => container.name);
    const asked = url.searchParams.get('container');
    if (!asked && names.length > 1)
      return this.#send(
        response,
        400,
        status(
          400,
          'BadRequest',
          `a container name must be specified for pod ${entry.pod.metadata!.name}, choose one of: [${names.join(' ')}]`,
        ),
      );
    const containerId = this.#kubelet.containerOf(entry, asked);
    if (!containerId)
      return this.#send(
        response,
        400,
        status(400, 'BadRequest', `container "agent" in pod "${entry.pod.metadata!.name}" is waiting to start`),
      );
    const since = url.searchParams.get('sinceTime');
    if (url.searchParams.get('follow') !== 'true') {
      // What the log holds now: its last `tailLines` (kubelet's own cut), without timestamps unless asked.
      const tail = Number(url.searchParams.get('tailLines') ?? 10_000);
      void this.#kubelet.engine.logTail(containerId, tail).then((lines) => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(lines.map((line) => `${line}\n`).join(''));
      });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    // Podman stamps every frame; kubelet merges stdout and stderr into one stream, as here.
    const follow = this.#kubelet.engine.followLogs(containerId, (_stream, frame) => response.write(frame), {
      timestamps: true,
      sinceSeconds: since ? Math.floor(Date.parse(since) / 1000) : 0,
    });
    response.once('close', () => follow.stop());
    void follow.done.catch(() => {}).finally(() => response.end());
  }
}
