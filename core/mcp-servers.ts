// The MCP servers a repository's environment hands its agent (`mcp` in .svc/environment.yaml,
// core/environment.ts): a command the agent starts in its sandbox, or a remote URL. Pure: the
// schema, the `${secrets.NAME}` references a value may hold, the checks a run's start makes
// (activities/start-activities.ts) and their resolution at launch (activities/agent-activities.ts);
// each runtime renders the servers its own way (activities/runtimes/). docs/decisions/0052-mcp-servers.md.
import { z } from 'zod';
import type { RuntimeId } from './agents.ts';
import { SECRET_NAME } from './project-secrets.ts';

export const MAX_MCP_SERVERS = 16;
const MAX_ARGS = 64;
const MAX_ARG_CHARS = 4096;
const MAX_ENTRIES = 32;
const MAX_VALUE_CHARS = 8192;
const MAX_URL_CHARS = 2048;

/** A server's name: tools are offered as `mcp__<name>__<tool>`, and Codex takes it as a config key. */
export const MCP_SERVER_NAME = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
/** An environment variable's name, for a command server's `env`. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An HTTP header's name (a token of RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `${secrets.NAME}`: a project secret's value, put in at launch. */
const REFERENCE = /\$\{secrets\.([^}]*)\}/g;

/** The runtimes that take MCP servers: the `command` runtime runs an arbitrary program, which has no such notion. */
export const MCP_RUNTIMES: readonly RuntimeId[] = ['claude-code', 'codex', 'opencode', 'acp'];

/** A value with `${secrets.NAME}` references, each naming a secret the way a secret is named. */
const templated = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !/[\0\r\n]/.test(value), 'no NUL or line break')
    .superRefine((value, context) => {
      for (const [, name] of value.matchAll(REFERENCE))
        if (!SECRET_NAME.test(name!))
          context.addIssue({ code: 'custom', message: `\${secrets.${name}}: not a secret's name` });
    });

/** Named values (a server's env, its headers): at most MAX_ENTRIES, each name checked by `shape`. */
const entries = (shape: RegExp, what: string) =>
  z.record(z.string(), templated(MAX_VALUE_CHARS)).superRefine((values, context) => {
    const names = Object.keys(values);
    if (names.length > MAX_ENTRIES) context.addIssue({ code: 'custom', message: `at most ${MAX_ENTRIES}` });
    for (const key of names)
      if (key.length > 128 || !shape.test(key)) context.addIssue({ code: 'custom', path: [key], message: what });
  });

const name = z
  .string()
  .max(32)
  .regex(MCP_SERVER_NAME, 'lower case letters and digits, words joined by one - or _, at most 32');

/** Either `command` (started by the agent in its sandbox, with `env`) or `url` (a remote server, with `headers`). */
const server = z
  .object({
    name,
    command: z
      .array(
        z
          .string()
          .min(1)
          .max(MAX_ARG_CHARS)
          .refine((arg) => !arg.includes('\0'), 'no NUL'),
      )
      .min(1)
      .max(MAX_ARGS)
      .optional(),
    env: entries(ENV_NAME, 'an environment variable name').optional(),
    url: z
      .string()
      .max(MAX_URL_CHARS)
      .refine((text) => URL.canParse(text), 'a URL')
      .refine((text) => !URL.canParse(text) || /^https?:$/.test(new URL(text).protocol), 'an http or https URL')
      .refine(
        (text) => !URL.canParse(text) || (!new URL(text).username && !new URL(text).password),
        'no credentials in the URL: put them in a header, from a secret',
      )
      .optional(),
    headers: entries(HEADER_NAME, 'an HTTP header name').optional(),
  })
  .strict()
  .superRefine((server, context) => {
    if ((server.command === undefined) === (server.url === undefined))
      context.addIssue({ code: 'custom', message: 'either command (run in the sandbox) or url (a remote server)' });
    if (server.command !== undefined && server.headers !== undefined)
      context.addIssue({ code: 'custom', path: ['headers'], message: 'for a url server; a command takes env' });
    if (server.url !== undefined && server.env !== undefined)
      context.addIssue({ code: 'custom', path: ['env'], message: 'for a command server; a url takes headers' });
  });

export const mcpServersSchema = z
  .array(server)
  .min(1)
  .max(MAX_MCP_SERVERS)
  .superRefine((servers, context) => {
    const seen = new Set<string>();
    for (const [index, server] of servers.entries()) {
      if (seen.has(server.name))
        context.addIssue({ code: 'custom', path: [index, 'name'], message: `"${server.name}" is named twice` });
      seen.add(server.name);
    }
  });

export type McpServer = z.infer<typeof server>;
export type McpRemoteServer = McpServer & { url: string };

export const isRemote = (server: McpServer): server is McpRemoteServer => server.url !== undefined;

/** The secrets a server's values name, each once, in order. */
export function referencedSecrets(servers: readonly McpServer[]): string[] {
  const names = new Set<string>();
  for (const server of servers)
    for (const value of Object.values(isRemote(server) ? (server.headers ?? {}) : (server.env ?? {})))
      for (const [, reference] of value.matchAll(REFERENCE)) names.add(reference!);
  return [...names];
}

/**
 * Why a run cannot hand these servers to its agent, or null: the runtime takes none, a secret is
 * not one of the run's (unknown, or of scope `setup`: the agent never gets those), or the project
 * allows no network and a server is remote.
 */
export function mcpRefusal(
  servers: readonly McpServer[],
  runtime: RuntimeId,
  runSecrets: ReadonlyMap<string, string>,
  networkNone: boolean,
): string | null {
  if (!MCP_RUNTIMES.includes(runtime))
    return `mcp: the agent's runtime (${runtime}) takes no MCP servers; use ${MCP_RUNTIMES.join(', ')}`;
  for (const secret of referencedSecrets(servers)) {
    const scope = runSecrets.get(secret);
    if (scope === undefined) return `mcp: \${secrets.${secret}}: the project has no such secret`;
    if (scope !== 'run') return `mcp: \${secrets.${secret}}: a ${scope} secret; the agent gets only run secrets`;
  }
  const remote = servers.find(isRemote);
  if (remote && networkNone)
    return `mcp: ${remote.name}: the project's sandbox network is none, a remote server cannot be reached`;
  return null;
}

/** The servers with every reference replaced by its secret's value; throws when one is missing. */
export function resolveMcpServers(servers: readonly McpServer[], secrets: Record<string, string>): McpServer[] {
  const resolve = (value: string) =>
    value.replace(REFERENCE, (_, secret: string) => {
      const found = secrets[secret];
      if (found === undefined) throw new Error(`mcp: \${secrets.${secret}} is not one of the run's secrets`);
      return found;
    });
  const resolveAll = (values: Record<string, string>) =>
    Object.fromEntries(Object.entries(values).map(([key, value]) => [key, resolve(value)]));
  return servers.map((server) =>
    isRemote(server)
      ? { ...server, ...(server.headers ? { headers: resolveAll(server.headers) } : {}) }
      : { ...server, ...(server.env ? { env: resolveAll(server.env) } : {}) },
  );
}

/** The URLs of the remote servers: the run's sandbox may reach each one's host and port. */
export const mcpEndpoints = (servers: readonly McpServer[]): string[] =>
  servers.filter(isRemote).map((server) => server.url);

/**
 * Each server's env or header values as variables of the agent's environment, for a runtime whose
 * configuration is in its argv: any user of the host may read a process's argv, only its own user
 * its environment (where a project's secrets live). Answers, per server, each value's variable by
 * its key, and the variables (`SVC_MCP_<server>_<value>`: svc's prefix, which no secret may take).
 */
export function mcpValuesAsVariables(servers: readonly McpServer[]): {
  variables: Record<string, string>[];
  env: Record<string, string>;
} {
  const env: Record<string, string> = {};
  const variables = servers.map((server, index) =>
    Object.fromEntries(
      Object.entries((isRemote(server) ? server.headers : server.env) ?? {}).map(([key, value], at) => {
        const variable = `SVC_MCP_${index}_${at}`;
        env[variable] = value;
        return [key, variable];
      }),
    ),
  );
  return { variables, env };
}
