// Public mode's spectator views (SVC_AUTH=public, docs/security.md): a credential-less caller sees
// only allowlisted projects and their runs and plan-runs, without agent definitions, caps,
// dispatcher handles, failure detail of plan-runs, prompts (unless the project opts in with
// `spectators.showPrompts`), local paths or USD aggregates, with secrets masked in every text it
// is shown, and never holds a stream open. An operator's event lines are masked too, by value
// only: svc's own secrets (platform/secrets.ts) never leave in an event, whoever reads it.
import { Readable } from 'node:stream';
import { maskSecretsForOperator, redactKnownSecrets } from '../../platform/secrets.ts';
import type { Identity } from '../auth.ts';
import { Errors } from '../errors.ts';

export const REDACTED_PROMPT = '[prompt hidden from spectators]';
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY/;
const PATH_KEYS = new Set([
  'workspacePath',
  'salvagePath',
  'localPath',
  'cwd',
  'path',
  'socketDir',
  'toolchain',
  'refusedToolchain',
]);

export interface SpectatorSettings {
  /** The owners or owner/repo whose projects spectators may see. */
  allowlist: string[];
  /** Values masked wherever they appear, besides the process's registered secrets (platform/secrets.ts). */
  secrets: string[];
  /** Host directories whose paths are masked (data directory, project clones). */
  hiddenPaths: string[];
  /** Whether a project lets spectators read its prompts (.svc/config.yaml spectators.showPrompts). */
  showsPrompts: (projectId: string) => Promise<boolean>;
  /** Every registered project's id and git URL: the policy decides which are visible. */
  projects: () => Promise<{ id: string; gitUrl: string }[]>;
}

/**
 * The spectator policy: what a credential-less caller may see, and how it is masked. It decides
 * from the data it is given (settings and callbacks) and reads no storage itself.
 */

export class Spectators {
  readonly #settings: SpectatorSettings;

  constructor(settings: SpectatorSettings) {
    this.#settings = settings;
  }

  static is(identity: Identity | undefined): boolean {
    return identity?.kind === 'anonymous';
  }

  #allows(gitUrl: string): boolean {
    const [owner, name] = gitUrl
      .replace(/^https:\/\/github\.com\//, '')
      .toLowerCase()
      .split('/');
    return this.#settings.allowlist.includes(owner!) || this.#settings.allowlist.includes(`${owner}/${name}`);
  }

  /** Project ids a spectator may see. */
  async visibleProjects(): Promise<Set<string>> {
    const rows = await this.#settings.projects();
    return new Set(rows.filter((row) => this.#allows(row.gitUrl)).map((row) => row.id));
  }

  /** 404 (as for a missing resource) when a spectator may not see this project's work. */
  async assertVisible(
    identity: Identity | undefined,
    projectId: string | null | undefined,
    what: string,
  ): Promise<void> {
    if (!Spectators.is(identity)) return;
    if (!projectId || !(await this.visibleProjects()).has(projectId)) throw Errors.notFound(what);
  }

  /** Text as a spectator may read it: secrets masked, svc's own paths hidden. */
  text(value: string): string {
    let result = redactKnownSecrets(value, this.#settings.secrets);
    for (const path of this.#settings.hiddenPaths) if (path.length > 1) result = result.split(path).join('[svc path]');
    return result;
  }

  #value(value: unknown, key?: string): unknown {
    if (key && PATH_KEYS.has(key) && value !== null) return '[svc path]';
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((inner) => this.#value(inner));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, this.#value(inner, name)]));
    return value;
  }

  /** Runs as spectators see them: no agent definition or local path; prompts only where the project allows. */
  async runs<
    T extends { projectId?: string | null; prompt: string; renderedAgentJson?: unknown; salvagePath?: string | null },
  >(runs: T[]): Promise<T[]> {
    const shown = new Map<string, boolean>();
    for (const projectId of new Set(runs.map((run) => run.projectId).filter((id): id is string => Boolean(id))))
      shown.set(projectId, await this.#settings.showsPrompts(projectId));
    // Every text field is agent-influenced somewhere (salvageRef, preview messages): all are masked.
    return runs.map((run) => ({
      ...(this.#value(run) as T),
      renderedAgentJson: null,
      metadata: null,
      salvagePath: null,
      prompt: run.projectId && shown.get(run.projectId) ? this.text(run.prompt) : REDACTED_PROMPT,
    }));
  }

  async run<
    T extends { projectId?: string | null; prompt: string; renderedAgentJson?: unknown; salvagePath?: string | null },
  >(run: T): Promise<T> {
    return (await this.runs([run]))[0]!;
  }

  /** A run's change: paths and patches masked like any text; a patch showing a private key is withheld. */
  diff<T extends { files: { path: string; oldPath?: string; patch?: string }[] }>(diff: T): T {
    return {
      ...diff,
      files: diff.files.map((file) => ({
        ...file,
        path: this.text(file.path),
        ...(file.oldPath !== undefined ? { oldPath: this.text(file.oldPath) } : {}),
        ...(file.patch !== undefined
          ? { patch: PEM_BEGIN.test(file.patch) ? '@@ [redacted: a private key] @@\n' : this.text(file.patch) }
          : {}),
      })),
    };
  }

  static planRun<T extends Record<string, unknown>>(planRun: T) {
    const {
      promptTemplate: _t,
      providerOverride: _p,
      modelOverride: _m,
      maxCostUsd: _c,
      dispatcherHandle: _d,
      failureReason: _f,
      ...rest
    } = planRun;
    return rest;
  }

  static planRunChild<T extends { failureReason?: unknown }>(child: T) {
    const { failureReason: _f, ...rest } = child;
    return rest;
  }

  static project<T extends { localPath?: string }>(project: T) {
    const { localPath: _path, ...rest } = project;
    return rest;
  }

  /**
   * A stream of event lines as this caller may read it: a spectator's masked (redactLines), anyone
   * else's with svc's own secrets masked by value (and its token shapes).
   */
  eventLines(identity: Identity | undefined, lines: Readable): Readable {
    if (Spectators.is(identity)) return this.redactLines(lines);
    return Readable.from(
      (async function* () {
        for await (const line of lines) yield maskSecretsForOperator(String(line));
      })(),
    );
  }

  /** An NDJSON stream of events (one line per chunk) with each payload masked. */
  redactLines(lines: Readable): Readable {
    const spectators = this;
    const keys = new Set<string>();
    return Readable.from(
      (async function* () {
        for await (const line of lines) yield spectators.eventLine(String(line), keys);
      })(),
    );
  }

  /**
   * One event line, masked. A private key printed over several lines arrives as one event per
   * line: `openKeys` remembers, per run and stream, that a BEGIN line came and its END has not.
   */
  eventLine(line: string, openKeys = new Set<string>()): string {
    if (!line.trim()) return line;
    const event = JSON.parse(line) as { runId?: string; stream?: string | null; payload: any };
    const text = typeof event.payload?.text === 'string' ? (event.payload.text as string) : null;
    const key = `${event.runId}:${event.stream}`;
    if (text !== null && (openKeys.has(key) || PEM_BEGIN.test(text))) {
      if (PEM_END.test(text)) openKeys.delete(key);
      else openKeys.add(key);
      return `${JSON.stringify({ ...event, payload: { ...event.payload, text: '[redacted]' } })}\n`;
    }
    return `${JSON.stringify({ ...event, payload: this.#value(event.payload) })}\n`;
  }
}
