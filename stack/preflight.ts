// Everything `svc serve` and `svc worker` read besides the environment, checked before anything
// starts: the agents file, the embedded Temporal's settings and CLI, the database URL's kind, the
// GitHub App's key. A mistake is a ConfigurationError (one line naming the file or variable and
// what it may hold): the CLI prints it and exits 2 with no Temporal, database or port touched.
import { loadPrivateKey } from '../platform/github-app.ts';
import { AgentCatalog } from '../platform/agent-catalog.ts';
import { ConfigurationError } from '../platform/config-error.ts';
import type { SvcConfig } from '../platform/config.ts';
import {
  findTemporalCli,
  loadTemporalDevSettings,
  type TemporalCli,
  type TemporalDevSettings,
} from './temporal-dev.ts';

export interface Preflight {
  agents: AgentCatalog;
  /** The embedded Temporal's settings and CLI; undefined when an external Temporal is used. */
  embeddedTemporal: { settings: TemporalDevSettings; cli: TemporalCli } | undefined;
}

export function preflight(config: SvcConfig, env: NodeJS.ProcessEnv = process.env): Preflight {
  checkDatabaseUrl(config.databaseUrl);
  if (config.githubApp.app) checkPrivateKey(config.githubApp.app.privateKey);
  const agents = AgentCatalog.load(config.agentsFile);
  const embeddedTemporal = config.temporalAddress
    ? undefined
    : { settings: loadTemporalDevSettings(env), cli: findTemporalCli(env) };
  return { agents, embeddedTemporal };
}

/** A URL of another database would otherwise be taken for a SQLite file name. */
function checkDatabaseUrl(url: string): void {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1];
  if (scheme && !/^postgres(ql)?$/i.test(scheme))
    throw new ConfigurationError(
      `DATABASE_URL: ${scheme}:// is not supported (allowed: postgres://, postgresql:// or a SQLite file path)`,
    );
}

function checkPrivateKey(value: string): void {
  let key: string;
  try {
    key = loadPrivateKey(value);
  } catch (error) {
    // The value itself is never echoed: it may be a key in the wrong shape.
    throw new ConfigurationError(
      `SVC_GITHUB_APP_PRIVATE_KEY is neither a PEM key nor a readable file ` +
        `(${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  if (!key.includes('-----BEGIN'))
    throw new ConfigurationError('SVC_GITHUB_APP_PRIVATE_KEY: the file it names holds no PEM key');
}
