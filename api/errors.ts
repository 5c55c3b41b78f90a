// The one errors catalogue: every failure the API sends is one of these, rendered as the envelope
// {error:{code,message,hint?}}. Codes are stable snake_case; docs/api.md lists them with their statuses.

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, hint?: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.hint = hint;
    this.headers = headers;
  }

  toEnvelope() {
    return { error: { code: this.code, message: this.message, ...(this.hint ? { hint: this.hint } : {}) } };
  }
}

const BEARER_CHALLENGE = 'Bearer realm="svc"';
/** An outage of a dependency: svc recovers by itself when it is back. */
const RETRY_SOON = { 'Retry-After': '5' };

export const Errors = {
  validation: (message: string, hint?: string) => new ApiError(400, 'validation_error', message, hint),
  /** A webhook URL whose receiver svc will not deliver to (platform/webhook-targets.ts). */
  webhookTargetRefused: (reason: string) =>
    new ApiError(
      400,
      'webhook_target_refused',
      `the webhook's receiver ${reason}`,
      'a receiver on a private network must be listed in SVC_WEBHOOK_PRIVATE_TARGETS (host:port)',
    ),
  unauthorized: (message: string, hint?: string, challenge: 'invalid_request' | 'invalid_token' = 'invalid_token') =>
    new ApiError(401, 'unauthorized', message, hint ?? 'send Authorization: Bearer <operator token>', {
      'WWW-Authenticate': `${BEARER_CHALLENGE}, error="${challenge}"`,
    }),
  forbidden: (policy: string, detail?: string) =>
    new ApiError(
      403,
      'forbidden',
      detail ? `forbidden: ${detail}` : `this route needs the ${policy} capability`,
      'authenticate as the operator',
      { 'WWW-Authenticate': `${BEARER_CHALLENGE}, error="insufficient_scope"` },
    ),
  /** A capacity cap refused a new run (api/services/admission.ts): try again later. */
  admissionRejected: (reason: string, message: string) =>
    new ApiError(429, 'runtime_admission_rejected', `run not admitted: ${message}`, reason, { 'Retry-After': '30' }),
  /** The data directory's filesystem is below the operator's floor (api/services/admission.ts): no new run. */
  diskNearlyFull: (dataDir: string, state: string, floor: string) =>
    new ApiError(
      503,
      'disk_nearly_full',
      `run not admitted: the data directory's disk is nearly full: ${state}, below ${floor}`,
      `free space on the filesystem of ${dataDir}; runs already running go on`,
      { 'Retry-After': '60' },
    ),
  /** A spectator's client is past its request rate or has too many requests in progress (api/spectator-limits.ts). */
  rateLimited: (message: string, retryAfterSeconds: number) =>
    new ApiError(
      429,
      'rate_limited',
      message,
      'slow down: wait Retry-After seconds, and read event logs page by page (since=<last seq>)',
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  notFound: (what: string, hint?: string) => new ApiError(404, 'not_found', `${what} not found`, hint),
  /** A ref that is neither a branch of the remote nor a commit of the clone. */
  refNotFound: (message: string) =>
    new ApiError(404, 'not_found', message, 'name a branch of the remote, or a commit it has'),
  routeNotFound: (method: string, path: string) =>
    new ApiError(404, 'not_found', `no route for ${method} ${path}`, 'see GET /openapi.json for the routes svc serves'),
  methodNotAllowed: (method: string, path: string, allowed: string) =>
    new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${path}`, `allowed: ${allowed}`, {
      Allow: allowed,
    }),
  payloadTooLarge: (limit: number) =>
    new ApiError(413, 'payload_too_large', `request body is larger than ${limit} bytes`),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      415,
      'unsupported_media_type',
      `request body must be application/json, got ${type || 'no Content-Type'}`,
      'send Content-Type: application/json',
    ),
  originForbidden: (origin: string) =>
    new ApiError(
      403,
      'origin_forbidden',
      `a state-changing request from another origin (${origin.slice(0, 200)}) is refused`,
      'call svc from its own origin, or from a client that is not a browser',
    ),
  /** A Host svc is not reached at: a name re-pointed at svc's address (DNS rebinding), or one not listed yet. */
  misdirectedRequest: (host: string) =>
    new ApiError(
      421,
      'misdirected_request',
      `svc does not answer to the Host "${host.slice(0, 200)}"`,
      'list the name in SVC_ALLOWED_HOSTS (comma-separated), or set SVC_PUBLIC_URL to the address svc is reached at',
    ),
  projectUnavailable: (message: string, hint?: string) =>
    new ApiError(
      503,
      'project_unavailable',
      message,
      hint ?? 'check the git URL, the forge credentials and the server log',
    ),
  projectLacksSeeds: (projectId: string) =>
    new ApiError(
      400,
      'project_lacks_seeds',
      `project ${projectId} has no .seeds/ tracker`,
      'initialise one in the repository with `sd init` and refresh the project',
    ),
  svcConfigInvalid: (file: string, message: string) =>
    new ApiError(
      422,
      'svc_config_invalid',
      `${file} is invalid: ${message}`,
      'fix the file and refresh the project (GET /projects/{id}/svc-config lists the problems)',
    ),
  svcConfigUnavailable: (message: string) =>
    new ApiError(503, 'svc_config_unavailable', `the project's .svc/ directory cannot be read: ${message}`),
  conflict: (message: string, hint?: string) => new ApiError(409, 'state_transition_error', message, hint),
  /** DELETE /github-app while svc takes its App from SVC_GITHUB_APP_*: only the operator's settings change it. */
  githubAppFromEnvironment: () =>
    new ApiError(
      409,
      'github_app_from_environment',
      'svc takes its GitHub App from its environment, not from the data directory',
      'unset SVC_GITHUB_APP_ID, SVC_GITHUB_APP_PRIVATE_KEY and SVC_GITHUB_APP_INSTALLATION_ID, then restart svc',
    ),
  /** The GitHub App manifest names svc's own URLs: GitHub sends the browser back to them. */
  publicUrlRequired: () =>
    new ApiError(
      409,
      'public_url_required',
      "svc cannot register a GitHub App without knowing its public URL (GitHub's redirects go there)",
      'set SVC_PUBLIC_URL to the address browsers open svc at, then restart svc',
    ),
  temporalUnavailable: (detail: string) =>
    new ApiError(503, 'runtime_unreachable', 'the workflow engine (Temporal) is unreachable', detail, RETRY_SOON),
  databaseUnavailable: (detail: string) =>
    new ApiError(503, 'database_unavailable', 'the database is unreachable', detail.slice(0, 500), RETRY_SOON),
  planHasNoOpenChildren: () =>
    new ApiError(
      400,
      'plan_has_no_open_children',
      'every child of this plan-run is closed (or there are none)',
      'choose a plan or issues with open work',
    ),
  agentSchemaError: (message: string) =>
    new ApiError(422, 'agent_schema_error', message, 'fix the file in the repository and refresh the project'),
  previewRedirectInvalid: (runId: string) =>
    new ApiError(
      400,
      'preview_redirect_invalid',
      `the redirect is outside run ${runId}'s preview`,
      "give a path or URL inside the run's preview (GET /preview/config says where previews live)",
    ),
  previewTeardownUnavailable: (detail: string) =>
    new ApiError(
      503,
      'preview_teardown_unavailable',
      `the preview cannot be torn down now: ${detail}`,
      undefined,
      RETRY_SOON,
    ),
  /** GET /runs/{id}/diff on a run whose branch holds nothing yet (queued, no commit, nothing pushed). */
  runHasNoChange: (runId: string, reason: string) =>
    new ApiError(
      409,
      'run_has_no_change',
      `run ${runId} has no change to show: ${reason}`,
      'a running run shows what it has committed; ask again after its first commit',
    ),
  /** A worker could not read the run's commits (the forge, the workspace's objects, a limit). */
  runDiffUnavailable: (detail: string) =>
    new ApiError(
      503,
      'run_diff_unavailable',
      `the run's change cannot be read now: ${detail.slice(0, 500)}`,
      'retry shortly; the worker log says more',
      RETRY_SOON,
    ),
  runtimeConflict: (runId: string) => new ApiError(409, 'runtime_conflict', `run ${runId} already exists`),
  idempotencyKeyReused: () =>
    new ApiError(
      409,
      'idempotency_key_reused',
      'this Idempotency-Key was used for a different request',
      'send a new key for a new request; the same key repeats only the same request',
    ),
  eventStreamCapacity: (message: string, hint: string) =>
    new ApiError(503, 'event_stream_capacity', message, hint, RETRY_SOON),
  judgeNotConfigured: () =>
    new ApiError(
      501,
      'judge_not_configured',
      'the judge extension is not configured on this server',
      'set SVC_JUDGE_BASE_URL and SVC_JUDGE_EXPORT_TOKEN in the server environment',
    ),
  judgeUnreachable: (detail: string) =>
    new ApiError(
      502,
      'judge_unreachable',
      `the judge did not answer: ${detail}`,
      'check SVC_JUDGE_BASE_URL and that the judge is running',
    ),
  judgeExportFailed: (why: string) =>
    new ApiError(502, 'judge_export_failed', `the judge's export ${why}`, 'see the judge log'),
  internal: (requestId: string) =>
    new ApiError(500, 'internal_error', 'internal server error', `request id ${requestId}; see the server log`),
};
