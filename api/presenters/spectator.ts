// Public mode's spectator views (SVC_AUTH=public, notes/runs.md §6): a credential-less caller sees
// only allowlisted projects and their runs and plan-runs, without agent definitions, caps,
// dispatcher handles, failure detail of plan-runs, local paths or USD aggregates, with secrets
// masked in event text, and never holds a stream open.
import { Readable } from 'node:stream';
import type { Identity } from '../auth.ts';
import { ProjectEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { Errors } from '../errors.ts';

const SECRET_PATTERNS = [
  /\b(gh[pousr]_[A-Za-z0-9]{16,})/g,
  /\b(github_pat_[A-Za-z0-9_]{20,})/g,
  /\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,})/g,
  /\b(svc1\.run_[0-9a-z]{12}\.[0-9a-f]{64})/g,
  /\b(AKIA[0-9A-Z]{16})/g,
  /((?:bearer|token|password|secret|api[_-]?key)\s*[:=]?\s*)([^\s"']{8,})/gi,
];

export function redactSecrets(text: string): string {
  let result = text;
  for (const pattern of SECRET_PATTERNS) {
    result = result.replace(pattern, (match, first: string, second?: string) => (typeof second === 'string' && /[:=\s]$/.test(first) ? `${first}[redacted]` : '[redacted]'));
  }
  return result;
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactValue(inner)]));
  return value;
}

export class Spectators {
  readonly #readModel: ReadModel;
  readonly #allowlist: string[];

  constructor(readModel: ReadModel, allowlist: string[]) {
    this.#readModel = readModel;
    this.#allowlist = allowlist;
  }

  static is(identity: Identity | undefined): boolean {
    return identity?.kind === 'anonymous';
  }

  #allows(gitUrl: string): boolean {
    const [owner, name] = gitUrl.replace(/^https:\/\/github\.com\//, '').toLowerCase().split('/');
    return this.#allowlist.includes(owner!) || this.#allowlist.includes(`${owner}/${name}`);
  }

  /** Project ids a spectator may see. */
  async visibleProjects(): Promise<Set<string>> {
    const rows = await this.#readModel.em().find(ProjectEntity, { id: { $ne: '' } }, { fields: ['id', 'gitUrl'] });
    return new Set(rows.filter((row) => this.#allows(row.gitUrl)).map((row) => row.id));
  }

  /** 404 (as for a missing resource) when a spectator may not see this project's work. */
  async assertVisible(identity: Identity | undefined, projectId: string | null | undefined, what: string): Promise<void> {
    if (!Spectators.is(identity)) return;
    if (!projectId || !(await this.visibleProjects()).has(projectId)) throw Errors.notFound(what);
  }

  static run<T extends { renderedAgentJson?: unknown }>(run: T): T {
    return { ...run, renderedAgentJson: null };
  }

  static planRun<T extends Record<string, unknown>>(planRun: T) {
    const { promptTemplate: _t, providerOverride: _p, modelOverride: _m, maxCostUsd: _c, dispatcherHandle: _d, failureReason: _f, ...rest } = planRun;
    return rest;
  }

  static project<T extends { localPath?: string }>(project: T) {
    const { localPath: _path, ...rest } = project;
    return rest;
  }

  /** An NDJSON stream of events (one line per chunk) with each payload's secrets masked. */
  static redactLines(lines: Readable): Readable {
    return Readable.from(
      (async function* () {
        for await (const line of lines) yield Spectators.eventLine(String(line));
      })(),
    );
  }

  static eventLine(line: string): string {
    if (!line.trim()) return line;
    const event = JSON.parse(line) as { payload: unknown };
    return `${JSON.stringify({ ...event, payload: redactValue(event.payload) })}\n`;
  }
}
