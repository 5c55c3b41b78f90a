// A small client of the Docker Engine API, the subset the container backend calls (create, start,
// inspect, logs, exec, wait, stop, remove, image inspect, ping). Docker and Podman (`podman system
// service`) both serve it. Plain node:http over a unix socket or TCP: no native modules, nothing
// the engine does not document (docs/decisions/0027-container-backend.md: why not dockerode).
import type { IncomingMessage } from 'node:http';
import { http } from '../../../platform/node-http.ts';
import type { ContainerCreateBody, ServiceCreateBody } from '../../spec.ts';

/** The API version svc speaks: Docker 20.10+ and Podman 3+ serve it. */
const API_VERSION = 'v1.41';

/** Where the engine listens: `unix:///run/podman/podman.sock`, `/var/run/docker.sock` or `tcp://host:port`. */
export type EngineAddress = string;

export class EngineError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface ContainerState {
  Status: string;
  Running: boolean;
  OOMKilled: boolean;
  Pid: number;
  ExitCode: number;
  StartedAt: string;
  FinishedAt: string;
}

function target(address: EngineAddress): { socketPath: string } | { host: string; port: number } {
  if (address.startsWith('tcp://') || address.startsWith('http://')) {
    const url = new URL(address.replace(/^tcp:/, 'http:'));
    return { host: url.hostname, port: Number(url.port || 2375) };
  }
  return { socketPath: address.replace(/^unix:\/\//, '') };
}

/** One Engine API client; every call has a timeout except the streams that follow a container. */
export class DockerEngine {
  readonly address: EngineAddress;
  constructor(address: EngineAddress) {
    this.address = address;
  }

  #open(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          ...target(this.address),
          method,
          path: `/${API_VERSION}${path}`,
          headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
          // 0 (a stream, a wait) must say so: Node's global agent times an idle socket out after 5 s.
          timeout: timeoutMs,
        },
        resolve,
      );
      if (timeoutMs)
        req.once('timeout', () => req.destroy(new Error(`the container engine did not answer ${method} ${path}`)));
      req.once('error', reject);
      req.end(payload);
    });
  }

  async #call<T>(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<T | null> {
    const response = await this.#open(method, path, body, timeoutMs);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = response.statusCode ?? 0;
    if (status >= 400) {
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        // not JSON: keep the text
      }
      throw new EngineError(status, `${method} ${path}: ${status} ${message.trim()}`);
    }
    return text ? (JSON.parse(text) as T) : null;
  }

  async ping(): Promise<void> {
    const response = await this.#open('GET', '/_ping', undefined, 5000);
    response.resume();
    if (response.statusCode !== 200) throw new EngineError(response.statusCode ?? 0, 'ping failed');
  }

  /** svc's containers (label `svc.sandbox`), running or not. */
  async listSandboxes(): Promise<{ Id: string; Labels: Record<string, string>; State: string }[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: ['svc.sandbox'] }));
    return (await this.#call('GET', `/containers/json?all=true&filters=${filters}`)) ?? [];
  }

  /** The engine's name (Components) and how it manages cgroups (`cgroupfs` or `systemd`). */
  async info(): Promise<{ CgroupDriver?: string; Components?: { Name: string }[] }> {
    const [info, version] = await Promise.all([
      this.#call<{ CgroupDriver?: string }>('GET', '/info'),
      this.#call<{ Components?: { Name: string }[] }>('GET', '/version'),
    ]);
    return { CgroupDriver: info?.CgroupDriver, Components: version?.Components };
  }

  /** The image's configuration, or null when the engine does not have it. */
  async inspectImage(image: string): Promise<{ Config?: { Volumes?: Record<string, unknown> | null } } | null> {
    try {
      return await this.#call('GET', `/images/${encodeURIComponent(image)}/json`);
    } catch (error) {
      if (error instanceof EngineError && error.status === 404) return null;
      throw error;
    }
  }

  async imageExists(image: string): Promise<boolean> {
    return (await this.inspectImage(image)) !== null;
  }

  async create(name: string, body: ContainerCreateBody | ServiceCreateBody): Promise<string> {
    const created = await this.#call<{ Id: string }>(
      'POST',
      `/containers/create?name=${encodeURIComponent(name)}`,
      body,
    );
    return created!.Id;
  }

  async start(id: string): Promise<void> {
    await this.#call('POST', `/containers/${id}/start`);
  }

  /** The container's state, or null when the engine has no such container. */
  async inspect(idOrName: string, timeoutMs?: number): Promise<{ Id: string; State: ContainerState } | null> {
    try {
      return await this.#call('GET', `/containers/${encodeURIComponent(idOrName)}/json`, undefined, timeoutMs);
    } catch (error) {
      if (error instanceof EngineError && error.status === 404) return null;
      throw error;
    }
  }

  /** Waits until the container has stopped; answers its exit code. No timeout: agents run for hours. */
  async wait(id: string): Promise<number> {
    const result = await this.#call<{ StatusCode: number }>('POST', `/containers/${id}/wait`, undefined, 0);
    return result!.StatusCode;
  }

  /** Stops the container: SIGTERM, then SIGKILL after `graceSeconds`. */
  async stop(id: string, graceSeconds: number): Promise<void> {
    try {
      await this.#call('POST', `/containers/${id}/stop?t=${graceSeconds}`, undefined, (graceSeconds + 30) * 1000);
    } catch (error) {
      // 304: already stopped; 404: already gone.
      if (!(error instanceof EngineError && (error.status === 304 || error.status === 404))) throw error;
    }
  }

  async remove(id: string): Promise<void> {
    try {
      await this.#call('DELETE', `/containers/${id}?force=true&v=true`);
    } catch (error) {
      if (!(error instanceof EngineError && error.status === 404)) throw error;
    }
  }

  /**
   * Runs `command` in a running container and answers its exit code once it ended, or null when it
   * did not end within `timeoutMs` (a probe that hangs is a probe that failed). Attached: Podman
   * 4.3 never marks a detached exec as ended; the output is read and dropped.
   */
  async exec(id: string, command: string[], timeoutMs: number): Promise<number | null> {
    const created = await this.#call<{ Id: string }>('POST', `/containers/${id}/exec`, {
      Cmd: command,
      AttachStdout: true,
      AttachStderr: true,
    });
    const exec = created!.Id;
    try {
      const response = await this.#open('POST', `/exec/${exec}/start`, { Detach: false, Tty: false }, timeoutMs);
      response.resume();
      await new Promise((resolve, reject) => response.once('end', resolve).once('error', reject));
    } catch {
      return null;
    }
    const state = await this.#call<{ Running: boolean; ExitCode: number | null }>('GET', `/exec/${exec}/json`);
    return state && !state.Running ? (state.ExitCode ?? null) : null;
  }

  /** The container's last `lines` lines of output (stdout and stderr, in the engine's order). */
  async logTail(id: string, lines: number): Promise<string[]> {
    const response = await this.#open('GET', `/containers/${id}/logs?stdout=true&stderr=true&tail=${lines}`);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    if ((response.statusCode ?? 0) >= 400) return [];
    let rest = Buffer.concat(chunks);
    const payloads: Buffer[] = [];
    while (rest.length >= 8) {
      const length = rest.readUInt32BE(4);
      payloads.push(rest.subarray(8, 8 + length));
      rest = rest.subarray(8 + length);
    }
    return Buffer.concat(payloads).toString('utf8').split('\n').filter(Boolean).slice(-lines);
  }

  /**
   * Follows the container's output, each frame to `onFrame` (stream 2 is stderr), from `sinceSeconds`
   * (0: its start), until the engine ends the stream or `stop()` is called (an engine may hold a
   * follow open after its container has gone). With `timestamps` each frame starts with the
   * engine's RFC 3339 time and a space. The stream is the engine's multiplexed format: 8-byte frame
   * headers (stream, 0, 0, 0, big-endian length); svc never gives a container a TTY.
   */
  followLogs(
    id: string,
    onFrame: (stream: number, payload: Buffer) => void,
    options: { timestamps?: boolean; sinceSeconds?: number } = {},
  ): { done: Promise<void>; stop(): void } {
    let response: IncomingMessage | undefined;
    let stopped = false;
    const query = `follow=true&stdout=true&stderr=true&timestamps=${options.timestamps ? 'true' : 'false'}`;
    const done = (async () => {
      response = await this.#open(
        'GET',
        `/containers/${id}/logs?${query}&since=${options.sinceSeconds ?? 0}`,
        undefined,
        0,
      );
      if (stopped) response.destroy();
      if ((response.statusCode ?? 0) >= 400) {
        response.resume();
        throw new EngineError(response.statusCode ?? 0, `logs of ${id}: ${response.statusCode}`);
      }
      let pending: Buffer = Buffer.alloc(0);
      try {
        for await (const chunk of response) {
          pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
          while (pending.length >= 8) {
            const length = pending.readUInt32BE(4);
            if (pending.length < 8 + length) break;
            onFrame(pending[0]!, pending.subarray(8, 8 + length));
            pending = pending.subarray(8 + length);
          }
        }
      } catch (error) {
        if (!stopped) throw error;
      }
    })();
    return {
      done,
      stop() {
        stopped = true;
        response?.destroy();
      },
    };
  }
}
