// `svc doctor`: can this client use that server (reachable, token accepted, same version), or with
// `--local`, is this host set up to serve (cli/doctor/local-checks.ts).
import { Command, Option } from 'clipanion';
import { describeForgeIdentity, type ForgeIdentity } from '../../core/forge-identity.ts';
import { SVC_VERSION } from '../../platform/version.ts';
import { EXIT, RemoteCommand, table } from '../base-command.ts';
import { resolveClientSettings } from '../client/settings.ts';
import type { Finding } from '../doctor/finding.ts';

/** The wire shape of one check (the API's ReadyCheck): a warning is `ok: true` with a message. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  message?: string;
  hint?: string;
}

const PROBE_TIMEOUT_MS = 10_000;

interface Answer {
  status: number;
  body: any;
}

/** One GET with a deadline; throws on no answer at all (refused, DNS, timeout). */
async function probe(baseUrl: string, path: string, token?: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, {
    headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return { status: response.status, body: undefined };
  }
}

/** GET /readyz's 503 codes and the check each stands for. */
const READYZ_FAILURES: Record<string, string> = {
  database_unavailable: 'db_reachable',
  runtime_unreachable: 'temporal_reachable',
};

function cause(error: unknown): string {
  const failure = error as Error & { cause?: Error };
  return failure.name === 'TimeoutError'
    ? `no answer in ${PROBE_TIMEOUT_MS / 1000}s`
    : (failure.cause?.message ?? failure.message);
}

export class DoctorCommand extends RemoteCommand {
  static override paths = [['doctor']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: 'check that the server is reachable, the token is accepted and versions match',
    details: `
      Prints one \`{"name","ok","message"?,"hint"?}\` line per check (\`--output json\`: one JSON array of them;
      \`--output pretty\`: a table). A warning is \`ok: true\` with a message; \`--verbose\` also says what each passing
      check found.

      Remote checks (the default), against \`--url\`/\`--token\` (or SVC_BASE_URL, SVC_API_TOKEN, the client config):
      \`server_reachable\` (GET /healthz; nothing else runs when it fails), \`auth_valid\` (GET /whoami answers the
      operator; skipped with \`--no-auth\`), \`version_match\` (GET /version equals this client's version), then, when
      the token is the operator's, the server's own readiness checks from GET /readyz (\`db_reachable\`,
      \`temporal_reachable\`; when it is not ready, the one that failed) and \`github_identity\` (GET /github-app:
      always says which GitHub identity the server acts with: an installed App, by id and slug and whether it comes from
      the environment or the data directory, else the personal access token; a warning when it has none).

      \`--local\` checks this host instead, from the environment \`svc serve\` would read (no server needed):
      \`config\`, \`data_dir\`, \`disk_space\` and \`disk_use\` (free space against SVC_DISK_MIN_FREE_*, and what
      each area of the data directory takes; warnings only), \`operator_token\`, \`agents\`, \`git\`, \`git_identity\`
      (warning only), \`db_reachable\`, \`projects_root\`, \`bwrap\`, \`temporal_reachable\`, \`svc_config\` and
      \`svc_config_deprecations\` of the registered projects, \`stale_sandbox_workspaces\`.

      Exit codes: 0 every check passed (warnings included), 1 a check failed, 3 the server is unreachable, 2 usage.
    `,
    examples: [
      ['Check the configured server', '$0 doctor'],
      ['Check a server without a token', '$0 doctor --url http://127.0.0.1:8080 --no-auth'],
      ['Check this host before starting svc', '$0 doctor --local --output pretty'],
    ],
  });

  local = Option.Boolean('--local', false, { description: 'check this host (deployment side) instead of a server' });
  auth = Option.Boolean('--auth', true, { description: 'check the token (--no-auth: skip auth_valid)' });
  verbose = Option.Boolean('--verbose', false, { description: 'say what passing checks found' });

  readonly #results: Finding[] = [];

  protected async run(): Promise<number> {
    let code: number = EXIT.ok;
    if (this.local) {
      const { localChecks } = await import('../doctor/local-checks.ts');
      for await (const finding of localChecks(process.env)) this.#report(finding);
    } else code = await this.#remote();
    if (this.output === 'pretty' && this.#results.length)
      this.line(
        table(
          ['CHECK', 'RESULT', 'MESSAGE'],
          this.#results.map((finding) => {
            const check = this.#wire(finding);
            const text = [check.message, check.hint && `hint: ${check.hint}`].filter(Boolean).join(' — ');
            return [finding.name, { ok: 'ok', warn: 'warn', fail: 'FAIL' }[finding.level], text];
          }),
        ),
      );
    if (code !== EXIT.ok) return code;
    return this.#results.some((finding) => finding.level === 'fail') ? EXIT.failed : EXIT.ok;
  }

  /** The remote checks; answers EXIT.unreachable when the server does not answer at all. */
  async #remote(): Promise<number> {
    const { baseUrl, token } = resolveClientSettings({ url: this.url, token: this.token });
    const started = Date.now();
    let health: Answer;
    try {
      health = await probe(baseUrl, '/healthz');
    } catch (error) {
      this.#report({
        name: 'server_reachable',
        level: 'fail',
        message: `cannot reach ${baseUrl}: ${cause(error)}`,
        hint: 'is `svc serve` running? set --url or SVC_BASE_URL',
      });
      return EXIT.unreachable;
    }
    if (health.status !== 200 || health.body?.ok !== true) {
      this.#report({
        name: 'server_reachable',
        level: 'fail',
        message: `${baseUrl}/healthz answered HTTP ${health.status}, not svc's {"ok":true}`,
        hint: "check that --url is svc's API base URL",
      });
      return EXIT.failed;
    }
    this.#report({
      name: 'server_reachable',
      level: 'ok',
      detail: `${baseUrl} answered in ${Date.now() - started} ms`,
    });

    let mayReadOperator = !this.auth;
    if (this.auth) mayReadOperator = await this.#authCheck(baseUrl, token);

    const version = await probe(baseUrl, '/version').catch(() => undefined);
    const server = version?.status === 200 ? String(version.body?.version) : undefined;
    if (server === SVC_VERSION)
      this.#report({ name: 'version_match', level: 'ok', detail: `server and client are ${SVC_VERSION}` });
    else
      this.#report({
        name: 'version_match',
        level: 'fail',
        message: server
          ? `server ${server}, client ${SVC_VERSION}`
          : `GET /version answered ${version ? `HTTP ${version.status}` : 'nothing'}`,
        hint: 'run the same svc version on both sides',
      });

    // The server's own view of its database and Temporal, for a caller allowed to read it.
    if (mayReadOperator) {
      const ready = await probe(baseUrl, '/readyz', token).catch(() => undefined);
      const failed = ready?.status === 503 ? READYZ_FAILURES[ready.body?.error?.code] : undefined;
      if (failed)
        this.#report({
          name: failed,
          level: 'fail',
          message: ready!.body.error.message,
          hint: ready!.body.error.hint,
          detail: 'as the server sees it',
        });
      if (ready?.status === 200 && Array.isArray(ready.body?.checks))
        for (const check of ready.body.checks as DoctorCheck[])
          this.#report({
            name: check.name,
            level: check.ok ? 'ok' : 'fail',
            message: check.message,
            hint: check.hint,
            detail: 'as the server sees it',
          });
      await this.#githubIdentity(baseUrl, token);
    }
    return EXIT.ok;
  }

  /** github_identity: which GitHub identity the server acts with, always said (an App swapped in must show). */
  async #githubIdentity(baseUrl: string, token: string | undefined): Promise<void> {
    const answer = await probe(baseUrl, '/github-app', token).catch(() => undefined);
    if (answer?.status !== 200 || !answer.body?.mode) return;
    const identity = answer.body as ForgeIdentity;
    this.#report({
      name: 'github_identity',
      level: identity.mode === 'anonymous' ? 'warn' : 'ok',
      message: `svc acts as ${describeForgeIdentity(identity)}`,
      hint:
        identity.mode === 'anonymous'
          ? 'set SVC_GIT_TOKEN, or register a GitHub App: svc github-app register'
          : undefined,
    });
  }

  /** auth_valid: whether the token is the operator's. Answers whether operator reads are allowed. */
  async #authCheck(baseUrl: string, token: string | undefined): Promise<boolean> {
    const name = 'auth_valid';
    const hint = "check --token / SVC_API_TOKEN against the server's operator token (<data dir>/operator-token)";
    if (!token) {
      this.#report({ name, level: 'fail', message: 'no token to check', hint: `${hint}; or --no-auth to skip` });
      return false;
    }
    let whoami: Answer;
    try {
      whoami = await probe(baseUrl, '/whoami', token);
    } catch (error) {
      this.#report({ name, level: 'fail', message: `GET /whoami: ${cause(error)}` });
      return false;
    }
    const identity = whoami.body?.identity;
    if (whoami.status === 200 && identity === 'operator') {
      this.#report({ name, level: 'ok', detail: `operator (${(whoami.body.capabilities ?? []).join(', ')})` });
      return true;
    }
    const whose = identity === 'run' ? `run ${whoami.body.runId}'s` : `an ${identity} caller's`;
    if (whoami.status === 200)
      this.#report({ name, level: 'fail', message: `the token is ${whose}, not the operator's`, hint });
    else
      this.#report({
        name,
        level: 'fail',
        message: [`GET /whoami answered HTTP ${whoami.status}`, whoami.body?.error?.message].filter(Boolean).join(': '),
        hint,
      });
    return false;
  }

  #wire(finding: Finding): DoctorCheck {
    // A passing check says what it found only when asked, unless it carries a message of its own.
    const message =
      finding.level === 'ok'
        ? (finding.message ?? (this.verbose ? finding.detail : undefined))
        : [finding.message, this.verbose ? finding.detail : undefined].filter(Boolean).join(' — ') || undefined;
    return {
      name: finding.name,
      ok: finding.level !== 'fail',
      ...(message ? { message } : {}),
      ...(finding.level !== 'ok' && finding.hint ? { hint: finding.hint } : {}),
    };
  }

  /** NDJSON goes out as each check finishes; the pretty table and the JSON array wait for the last one. */
  #report(finding: Finding): void {
    this.#results.push(finding);
    if (this.output !== 'pretty') this.emit(this.#wire(finding), '');
  }
}
