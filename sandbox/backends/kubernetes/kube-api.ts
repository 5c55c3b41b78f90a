// The few endpoints the Kubernetes backend calls, over @kubernetes/client-node: a Pod's create, read,
// deadline patch (svc's stop: the kubelet stops the pod and keeps its status), delete, list by
// label, a watch of one pod, and its log followed with timestamps; a preview's Service: create,
// read, delete. The cluster comes from the
// usual places (KUBECONFIG, ~/.kube/config, or the in-cluster service account).
import type * as KubeClient from '@kubernetes/client-node';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { createRequire } from 'node:module';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { RequestOptions } from 'node:https';
import { http, https } from '../../../platform/node-http.ts';

/** Labels every svc pod carries: the sweep and the admission count find them by these. */
export const POD_LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  sandbox: 'svc.dev/sandbox',
  /** A preview's pod: the one kind of run pod the API may connect to (40-network-policies.yaml). */
  preview: 'svc.dev/preview',
} as const;
/** The annotation naming a pod's sandbox (`<runId>` or `<runId>-finalize`). */
export const RUN_ANNOTATION = 'svc.dev/run';

export class KubeError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function statusOf(error: unknown): number {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : 0;
}

/** An answer of the API (a status) stays a KubeError; no answer (a network failure) is rethrown as it is. */
function explain(error: unknown, what: string): never {
  const status = statusOf(error);
  if (!status) throw error;
  const body = (error as { body?: unknown }).body;
  let message = `${what}: ${status}`;
  try {
    const parsed = typeof body === 'string' ? (JSON.parse(body) as { message?: string }) : undefined;
    if (parsed?.message) message = `${what}: ${parsed.message}`;
  } catch {
    // not JSON
  }
  throw new KubeError(status, message);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * The client, loaded on first use (synchronously: Node requires ES modules): it is ~25 MiB of an
 * API's or worker's heap, and only the Kubernetes backend needs it.
 */
let client: typeof KubeClient | undefined;
const kubeClient = () => (client ??= createRequire(import.meta.url)('@kubernetes/client-node') as typeof KubeClient);

const REQUEST_TIMEOUT_MS = 10_000;
/** The longest log line the supervisor takes as one (longer ones are cut). */
const LINE_MAX = 64 * 1024;

export class KubeApi {
  readonly #config: KubeClient.KubeConfig;
  readonly #core: KubeClient.CoreV1Api;

  readonly namespace: string;

  /** `kubeconfig`: a file (KUBECONFIG as svc was configured); else ~/.kube/config or the in-cluster account. */
  constructor(namespace: string, kubeconfig: string | null) {
    this.namespace = namespace;
    const { KubeConfig, CoreV1Api } = kubeClient();
    this.#config = new KubeConfig();
    if (kubeconfig) this.#config.loadFromFile(kubeconfig);
    else this.#config.loadFromDefault();
    this.#core = this.#config.makeApiClient(CoreV1Api);
  }

  /** The API server's address, for messages. */
  get server(): string {
    return this.#config.getCurrentCluster()?.server ?? 'an unknown cluster';
  }

  async create(pod: V1Pod): Promise<V1Pod> {
    const what = `creating pod ${pod.metadata?.name}`;
    const request = this.#core.createNamespacedPod({ namespace: this.namespace, body: pod });
    return await withTimeout(request, REQUEST_TIMEOUT_MS, what).catch((error) => explain(error, what));
  }

  /** The pod, or null when there is none. */
  async read(name: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<V1Pod | null> {
    const request = this.#core.readNamespacedPod({ name, namespace: this.namespace });
    try {
      return await withTimeout(request, timeoutMs, `reading pod ${name}`);
    } catch (error) {
      if (statusOf(error) === 404) return null;
      return explain(error, `reading pod ${name}`);
    }
  }

  /** A container's last lines (a service's, for the run's failure), or none when it has no log. */
  async logTail(name: string, container: string, lines: number): Promise<string[]> {
    const request = this.#core.readNamespacedPodLog({ name, namespace: this.namespace, container, tailLines: lines });
    try {
      const text = await withTimeout(request, REQUEST_TIMEOUT_MS, `reading the log of ${name}/${container}`);
      return text.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1);
    } catch {
      return [];
    }
  }

  /** Stops a pod through its deadline: the kubelet sends SIGTERM, then SIGKILL after the grace period. */
  async stop(name: string): Promise<void> {
    const body = [{ op: 'add', path: '/spec/activeDeadlineSeconds', value: 1 }];
    await withTimeout(
      this.#core.patchNamespacedPod({ name, namespace: this.namespace, body }),
      REQUEST_TIMEOUT_MS,
      `stopping pod ${name}`,
    ).catch((error) => (statusOf(error) === 404 ? undefined : explain(error, `stopping pod ${name}`)));
  }

  async remove(name: string, gracePeriodSeconds = 0): Promise<void> {
    await withTimeout(
      this.#core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds }),
      REQUEST_TIMEOUT_MS,
      `deleting pod ${name}`,
    ).catch((error) => (statusOf(error) === 404 ? undefined : explain(error, `deleting pod ${name}`)));
  }

  async list(labelSelector: string): Promise<V1Pod[]> {
    const request = this.#core.listNamespacedPod({ namespace: this.namespace, labelSelector });
    const list = await withTimeout(request, REQUEST_TIMEOUT_MS, 'listing pods').catch((error) =>
      explain(error, 'listing pods'),
    );
    return list.items;
  }

  /** Creates a Service; one of that name already there (a retried create) is answered instead. */
  async createService(service: V1Service): Promise<V1Service> {
    const name = service.metadata!.name!;
    const what = `creating service ${name}`;
    const request = this.#core.createNamespacedService({ namespace: this.namespace, body: service });
    try {
      return await withTimeout(request, REQUEST_TIMEOUT_MS, what);
    } catch (error) {
      if (statusOf(error) !== 409) return explain(error, what);
    }
    const existing = await withTimeout(
      this.#core.readNamespacedService({ name, namespace: this.namespace }),
      REQUEST_TIMEOUT_MS,
      `reading service ${name}`,
    ).catch((error) => explain(error, `reading service ${name}`));
    return existing;
  }

  async removeService(name: string): Promise<void> {
    await withTimeout(
      this.#core.deleteNamespacedService({ name, namespace: this.namespace }),
      REQUEST_TIMEOUT_MS,
      `deleting service ${name}`,
    ).catch((error) => (statusOf(error) === 404 ? undefined : explain(error, `deleting service ${name}`)));
  }

  /** Watches one pod: `onChange` gets every version; `done` settles when the API ends the watch. */
  watch(name: string, onChange: (type: string, pod: V1Pod) => void): { done: Promise<void>; stop(): void } {
    let controller: AbortController | undefined;
    let stopped = false;
    const done = new Promise<void>((resolve, reject) => {
      new (kubeClient().Watch)(this.#config)
        .watch(
          `/api/v1/namespaces/${this.namespace}/pods`,
          { fieldSelector: `metadata.name=${name}` },
          (type, pod: V1Pod) => onChange(type, pod),
          (error) => (error && !stopped ? reject(error as Error) : resolve()),
        )
        .then((abort) => {
          controller = abort;
          if (stopped) abort.abort();
        }, reject);
    });
    return {
      done,
      stop() {
        stopped = true;
        controller?.abort();
      },
    };
  }

  /**
   * Follows the agent container's log, with timestamps, from `sinceTime`; each line goes to `onLine`.
   * Over node:https with the kubeconfig's credentials (client-node's Log helper leaves an aborted
   * stream's error unhandled, which would take a supervisor down).
   */
  followLog(
    name: string,
    onLine: (line: string) => void,
    options: { sinceTime?: string; follow?: boolean } = {},
  ): { done: Promise<void>; stop(): void } {
    let request: ClientRequest | undefined;
    let stopped = false;
    const query = new URLSearchParams({
      container: 'agent',
      timestamps: 'true',
      follow: String(options.follow ?? true),
    });
    if (options.sinceTime) query.set('sinceTime', options.sinceTime);
    const url = new URL(`${this.server}/api/v1/namespaces/${this.namespace}/pods/${name}/log?${query}`);
    const done = (async () => {
      const requestOptions: RequestOptions = { method: 'GET' };
      await this.#config.applyToHTTPSOptions(requestOptions);
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const send = url.protocol === 'https:' ? https().request : http.request;
        request = send(url, requestOptions, resolve);
        request.once('error', reject);
        request.end();
        if (stopped) request.destroy();
      });
      if ((response.statusCode ?? 0) >= 400) {
        response.resume();
        throw new KubeError(response.statusCode ?? 0, `log of pod ${name}: ${response.statusCode}`);
      }
      // Each chunk is searched once, and a line is cut at LINE_MAX: a pod that writes one endless
      // line costs the worker a bounded buffer, not a rescan of it per chunk.
      let parts: Buffer[] = [];
      let size = 0;
      const emit = () => {
        onLine(Buffer.concat(parts).toString('utf8'));
        parts = [];
        size = 0;
      };
      for await (const chunk of response as AsyncIterable<Buffer>) {
        for (let start = 0; start <= chunk.length;) {
          const newline = chunk.indexOf(0x0a, start);
          let piece = chunk.subarray(start, newline < 0 ? chunk.length : newline);
          while (size + piece.length > LINE_MAX) {
            parts.push(piece.subarray(0, LINE_MAX - size));
            piece = piece.subarray(LINE_MAX - size);
            emit();
          }
          if (piece.length) parts.push(piece);
          size += piece.length;
          if (newline < 0) break;
          emit();
          start = newline + 1;
        }
      }
      if (size) emit();
    })();
    return {
      done: done.catch((error: unknown) => (stopped ? undefined : Promise.reject(error))),
      stop() {
        stopped = true;
        request?.destroy();
      },
    };
  }
}
