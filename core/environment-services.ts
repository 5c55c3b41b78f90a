// The `services` key of a repository's environment (.svc/environment.yaml, core/environment.ts):
// containers started beside the run's agent, reachable by name
// (docs/decisions/0053-service-containers.md). Pure: its schema and what a run makes of each service.
import { z } from 'zod';
import { duration, durationSeconds } from './svc-config.schema.ts';

/** The most services a run may have: each is a container the run's limits are shared with. */
export const SERVICES_MAX = 5;
export const SERVICE_READY_TIMEOUT_DEFAULT = '60s';
/** The longest a run waits for one service to be ready before it fails. */
export const SERVICE_READY_TIMEOUT_MAX_SECONDS = 600;
/** Names the agent's sandbox already gives a meaning (its /etc/hosts). */
const RESERVED_SERVICE_NAMES = ['localhost', 'svc-sandbox', 'ip6-localhost', 'ip6-loopback'];

const serviceName = z
  .string()
  .regex(/^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and -, a letter first, 1-32')
  .refine((name) => !RESERVED_SERVICE_NAMES.includes(name), 'a name the sandbox uses itself');
// A service runs without privileges: a port below 1024 would need one.
const servicePort = z.number().int().min(1024, 'at least 1024 (no privileges)').max(65535);
const argv = z.array(z.string().min(1).max(4096)).min(1).max(64);

const serviceSchema = z
  .object({
    name: serviceName,
    image: z.string().min(1).max(512),
    // The image's own entry point, with these arguments instead of its default command.
    command: argv.optional(),
    // Plain values: a service gets no project secret, and no svc one.
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name'), z.string().max(4096))
      .refine((env) => Object.keys(env).length <= 50, 'at most 50 variables')
      .optional(),
    ports: z.array(servicePort).min(1).max(10).optional(),
    readiness: z
      .object({
        tcp: servicePort.optional(),
        command: argv.optional(),
        timeout: duration
          .refine(
            (value) => durationSeconds(value) >= 1 && durationSeconds(value) <= SERVICE_READY_TIMEOUT_MAX_SECONDS,
            `between 1s and ${SERVICE_READY_TIMEOUT_MAX_SECONDS / 60}m`,
          )
          .default(SERVICE_READY_TIMEOUT_DEFAULT),
      })
      .strict()
      .refine((readiness) => !(readiness.tcp && readiness.command), 'either tcp or command, not both')
      .optional(),
  })
  .strict()
  .superRefine((service, context) => {
    const tcp = service.readiness?.tcp;
    if (tcp !== undefined && !(service.ports ?? []).includes(tcp))
      context.addIssue({ code: 'custom', path: ['readiness', 'tcp'], message: `${tcp} is not one of its ports` });
  });

export const servicesSchema = z
  .array(serviceSchema)
  .min(1)
  .max(SERVICES_MAX)
  .superRefine((services, context) => {
    const names = new Set<string>();
    const ports = new Map<number, string>();
    services.forEach((service, index) => {
      if (names.has(service.name))
        context.addIssue({ code: 'custom', path: [index, 'name'], message: `${service.name} is named twice` });
      names.add(service.name);
      // The services and the agent share one loopback: a port is one service's.
      for (const port of service.ports ?? []) {
        const owner = ports.get(port);
        if (owner !== undefined && owner !== service.name)
          context.addIssue({ code: 'custom', path: [index, 'ports'], message: `${port} is ${owner}'s too` });
        ports.set(port, service.name);
      }
    });
  });

/** How a run knows a service is ready: a port that accepts, a command that exits 0, or its start. */
export type ServiceReadiness = { tcp: number } | { command: string[] } | null;

/** A service as a run starts it. */
export interface ServicePlan {
  name: string;
  image: string;
  command: string[] | null;
  env: Record<string, string>;
  ports: number[];
  readiness: ServiceReadiness;
  readyTimeoutMs: number;
}

export function servicePlan(service: z.infer<typeof serviceSchema>): ServicePlan {
  const { readiness, ports = [] } = service;
  return {
    name: service.name,
    image: service.image,
    command: service.command ?? null,
    env: service.env ?? {},
    ports,
    // Without a readiness check, its first port accepting is the sign; without a port, its start.
    readiness: readiness?.tcp
      ? { tcp: readiness.tcp }
      : readiness?.command
        ? { command: readiness.command }
        : ports[0]
          ? { tcp: ports[0] }
          : null,
    readyTimeoutMs: durationSeconds(readiness?.timeout ?? SERVICE_READY_TIMEOUT_DEFAULT) * 1000,
  };
}

/** A run's limits, shared by its agent and its services. */
export interface RunShares {
  agent: number | null;
  service: number | null;
}

/**
 * How a run's limit (memory, CPU, processes) is shared where each container needs a limit of its
 * own: the agent keeps half, its services split the other half evenly; without services the agent
 * has it all. The containers' limits never add up to more than the run's. Null: no limit.
 */
export function runShares(limit: number | null, services: number): RunShares {
  if (limit === null || services === 0) return { agent: limit, service: limit };
  const service = Math.max(1, Math.floor(limit / 2 / services));
  return { agent: limit - service * services, service };
}

/** How many of a failed service's last lines the run's failure keeps. */
export const SERVICE_FAILURE_LOG_LINES = 20;
/** How much of each line it keeps: the workflow's history carries them, and they are the repository's. */
const SERVICE_LOG_LINE_MAX_CHARS = 2000;

/** A service's lines as a run's failure keeps them: the last ones, each cut. */
export function serviceFailureLines(lines: string[]): string[] {
  return lines
    .slice(-SERVICE_FAILURE_LOG_LINES)
    .map((line) => (line.length > SERVICE_LOG_LINE_MAX_CHARS ? `${line.slice(0, SERVICE_LOG_LINE_MAX_CHARS)}…` : line));
}

/** Why a run's service failed it, as its failure says: the service, what happened, its last lines. */
export interface ServiceFailure {
  service: string;
  message: string;
  logs: string[];
}
