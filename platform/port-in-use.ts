// A port svc must listen on that something else holds: said in one line naming the setting that
// moves it, never a stack trace, and never mistaken for svc's own server (a second embedded
// Temporal would otherwise find the first instance's and serve its runs).
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  constructor(address: string, what: string, remedy: string) {
    super(`${address} (${what}) is in use by another process: ${remedy}`);
    this.name = 'PortInUseError';
  }
}

/** Whether `host:port` is taken: a listen there fails with EADDRINUSE (any other failure is not this one's to say). */
export function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}
