// How long svc keeps what runs leave behind (SVC_RETENTION_*): workspaces, sandbox directories,
// run events, salvage bundles, kept repository environments, and the embedded Temporal server's
// closed workflows. Each is a duration (`90s`, `30m`, `12h`, `7d`) or `off` (kept for ever).

export interface RetentionSettings {
  /** How often each data directory's retention pass runs (SVC_RETENTION_INTERVAL). */
  intervalMs: number;
  /**
   * A terminal run's workspace whose PR is still open goes this long after the run ended
   * (SVC_RETENTION_WORKSPACES); one with no PR, or a merged or closed one, goes after `sandboxesMs`.
   */
  workspacesMs: number | null;
  /** A terminal run's sandbox directory (records and logs, already in the read model) goes after this. */
  sandboxesMs: number | null;
  /** A terminal run's events (its output) go this long after it ended; the run's row stays. */
  eventsMs: number | null;
  /**
   * A kept repository environment goes once no run has used it this long (SVC_RETENTION_ENVIRONMENTS),
   * the least recently used first; one a live run mounts stays.
   */
  environmentsMs: number | null;
  /** Salvage bundles go this long after they were taken (SVC_RETENTION_SALVAGE). */
  salvageMs: number | null;
  /** The embedded Temporal server keeps a closed workflow's history this long (SVC_RETENTION_TEMPORAL). */
  temporalMs: number;
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 } as const;
const DAY = UNIT_MS.d;

export const RETENTION_DEFAULTS = {
  SVC_RETENTION_INTERVAL: '1h',
  SVC_RETENTION_WORKSPACES: '7d',
  SVC_RETENTION_SANDBOXES: '10m',
  SVC_RETENTION_EVENTS: '90d',
  SVC_RETENTION_SALVAGE: '30d',
  SVC_RETENTION_ENVIRONMENTS: '14d',
  SVC_RETENTION_TEMPORAL: '30d',
} as const;

type RetentionVariable = keyof typeof RETENTION_DEFAULTS;

/** A duration in milliseconds, or null for `off` where `off` is allowed. */
export function parseRetentionDuration(name: string, text: string, offAllowed: boolean): number | null {
  const value = text.trim().toLowerCase();
  if (offAllowed && value === 'off') return null;
  const match = /^(\d{1,6})(s|m|h|d)$/.exec(value);
  if (!match)
    throw new Error(
      `${name} must be a duration such as 90s, 30m, 12h or 7d${offAllowed ? ', or off' : ''}, not "${text}"`,
    );
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms <= 0) throw new Error(`${name} must be longer than 0, not "${text}"`);
  return ms;
}

export function parseRetentionSettings(env: NodeJS.ProcessEnv): RetentionSettings {
  const read = (name: RetentionVariable, offAllowed: boolean) =>
    parseRetentionDuration(name, env[name] || RETENTION_DEFAULTS[name], offAllowed);
  const temporalMs = read('SVC_RETENTION_TEMPORAL', false)!;
  // Temporal keeps a closed workflow at least a day: a shorter retention is refused by the server.
  if (temporalMs < DAY)
    throw new Error(`SVC_RETENTION_TEMPORAL must be at least 1d, not "${env.SVC_RETENTION_TEMPORAL}"`);
  return {
    intervalMs: read('SVC_RETENTION_INTERVAL', false)!,
    workspacesMs: read('SVC_RETENTION_WORKSPACES', true),
    sandboxesMs: read('SVC_RETENTION_SANDBOXES', true),
    eventsMs: read('SVC_RETENTION_EVENTS', true),
    salvageMs: read('SVC_RETENTION_SALVAGE', true),
    environmentsMs: read('SVC_RETENTION_ENVIRONMENTS', true),
    temporalMs,
  };
}
