// GitHub with Apps, stood in: the manifest conversion (one-time codes → the App's credentials,
// with a real RSA key), installation tokens minted only for a valid App JWT (RS256 with the App's
// public key, iss = the App id, at most ten minutes) and recording what each asked for, and the
// repository and pull-request endpoints of PullRequestsStandIn accepting only the PAT or a token
// issued here for that very repository and a permission that covers the call.
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import type { GitHubApiStandIn, RecordedRequest } from './github-api-stand-in.ts';
import { githubRepo } from './github-api-stand-in.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';

type Handler = Parameters<GitHubApiStandIn['on']>[0];
type Answer = ReturnType<Handler>;

/** The permissions the stood-in App was created with (svc's manifest asks for these). */
const APP_PERMISSIONS: Record<string, string> = { contents: 'write', pull_requests: 'write', metadata: 'read' };

export interface JwtCheck {
  ok: boolean;
  reason: string | null;
  claims: { iss?: unknown; iat?: number; exp?: number } | null;
}

export interface IssuedToken {
  token: string;
  installationId: number;
  account: string;
  /** The repository names the token is limited to, or 'all' (none were named). */
  repositories: string[] | 'all';
  permissions: Record<string, string>;
  expiresAt: number;
}

const ok = (status: number, body: unknown): NonNullable<Answer> => ({ status, body });
const refuse = (status: number, message: string): NonNullable<Answer> => ({ status, body: { message } });

/** A stood-in App: its identity and credentials, with a real RSA key (PKCS#1, as GitHub hands them out). */
export function standInApp() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const slug = `svc-forge-${randomBytes(3).toString('hex')}`;
  return {
    id: 100_000 + Math.floor(Math.random() * 800_000),
    slug,
    pem: privateKey,
    publicKey,
    webhookSecret: `whsec${randomBytes(12).toString('hex')}`,
    clientId: `Iv1.${randomBytes(8).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
    htmlUrl: `https://github.com/apps/${slug}`,
  };
}

export type StandInApp = ReturnType<typeof standInApp>;

/**
 * Serves GitHub's manifest conversion for `app` on any stand-in: `code()` is a one-time code, as
 * GitHub appends it to the redirect after the user creates the App; any other code is a 404.
 */
export function serveManifestConversions(standIn: GitHubApiStandIn, app: StandInApp = standInApp()) {
  const codes = new Set<string>();
  standIn.on((request) => {
    const conversion = /^\/app-manifests\/([^/]+)\/conversions$/.exec(request.path);
    if (!conversion || request.method !== 'POST') return undefined;
    if (!codes.delete(conversion[1]!)) return refuse(404, 'Not Found');
    return ok(201, {
      id: app.id,
      slug: app.slug,
      name: app.slug,
      owner: { login: 'acme' },
      pem: app.pem,
      webhook_secret: app.webhookSecret,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      html_url: app.htmlUrl,
      permissions: APP_PERMISSIONS,
    });
  });
  return {
    app,
    code(): string {
      const code = randomBytes(10).toString('hex');
      codes.add(code);
      return code;
    },
  };
}

export class GitHubAppStandIn extends PullRequestsStandIn {
  readonly app = standInApp();
  readonly #conversions = serveManifestConversions(this, this.app);
  readonly pat: string;
  /** Every App JWT presented, in order, and whether it verified. */
  readonly jwts: JwtCheck[] = [];
  readonly issued: IssuedToken[] = [];
  /** Installation id → the account it is on and the repositories it covers (undefined: all). */
  readonly installations = new Map<number, { account: string; repositories: string[] | undefined }>();
  #nextInstallation = 40_000_000 + Math.floor(Math.random() * 1_000_000);

  constructor(pat = 'ghp_test') {
    super(pat);
    this.pat = pat;
    this.on((request) => this.#appRoutes(request));
    this.on((request) => {
      const match = /^\/repos\/([^/]+)\/([^/]+)$/.exec(request.path);
      return match && request.method === 'GET' ? ok(200, githubRepo(match[1]!, match[2]!)) : undefined;
    });
  }

  /** A one-time manifest code, as GitHub appends to the redirect after the user creates the App. */
  manifestCode(): string {
    return this.#conversions.code();
  }

  /** Installs the App on `account` (all its repositories, or only those named): the installation id. */
  install(account: string, repositories?: string[]): number {
    const id = this.#nextInstallation++;
    this.installations.set(id, { account, repositories });
    return id;
  }

  /** Every repository call goes through GitHub's token rules before the stood-in endpoints see it. */
  override on(handler: Handler): this {
    return super.on((request, url) => {
      if (!request.path.startsWith('/repos/')) return handler(request, url);
      const refused = this.#authorize(request);
      if (refused) return refused;
      return handler({ ...request, headers: { ...request.headers, authorization: `token ${this.pat}` } }, url);
    });
  }

  #authorize(request: RecordedRequest): Answer {
    const presented = /^token (.+)$/i.exec(String(request.headers.authorization ?? ''))?.[1];
    if (presented === this.pat) return undefined;
    const issued = this.issued.find((candidate) => candidate.token === presented);
    if (!issued || issued.expiresAt <= Date.now()) return refuse(401, 'Bad credentials');
    const [, owner, name, rest] = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(request.path) ?? [];
    const covers =
      owner?.toLowerCase() === issued.account.toLowerCase() &&
      (issued.repositories === 'all' || issued.repositories.includes(name!.toLowerCase()));
    if (!covers) return refuse(404, 'Not Found');
    const needed = rest?.startsWith('/pulls') ? 'pull_requests' : rest ? 'contents' : 'metadata';
    const granted = issued.permissions[needed];
    const write = request.method !== 'GET';
    if (!granted || (write && granted !== 'write')) return refuse(403, 'Resource not accessible by integration');
    return undefined;
  }

  #appRoutes(request: RecordedRequest): Answer {
    const installation = /^\/app\/installations\/(\d+)(\/access_tokens)?$/.exec(request.path);
    if (!installation) return undefined;
    const check = this.#verifyJwt(String(request.headers.authorization ?? ''));
    this.jwts.push(check);
    if (!check.ok) return refuse(401, `A JSON web token could not be decoded (${check.reason})`);
    const id = Number(installation[1]);
    const found = this.installations.get(id);
    if (!found) return refuse(404, 'Not Found');
    if (!installation[2] && request.method === 'GET')
      return ok(200, { id, app_id: this.app.id, account: { login: found.account }, permissions: APP_PERMISSIONS });
    if (!installation[2] || request.method !== 'POST') return undefined;
    const body = (request.body ?? {}) as { repositories?: string[]; permissions?: Record<string, string> };
    const named = body.repositories?.map((name) => name.toLowerCase());
    if (named?.some((name) => found.repositories && !found.repositories.includes(name)))
      return refuse(
        422,
        'There is at least one repository that does not exist or is not accessible to the parent installation.',
      );
    const permissions = body.permissions ?? APP_PERMISSIONS;
    for (const [name, level] of Object.entries(permissions))
      if (!APP_PERMISSIONS[name] || (level === 'write' && APP_PERMISSIONS[name] !== 'write'))
        return refuse(422, `The permissions requested are not granted to this installation (${name}).`);
    const token: IssuedToken = {
      token: `ghs_${randomBytes(18).toString('hex')}`,
      installationId: id,
      account: found.account,
      repositories: named ?? 'all',
      permissions,
      expiresAt: Date.now() + 3_600_000,
    };
    this.issued.push(token);
    return ok(201, {
      token: token.token,
      expires_at: new Date(token.expiresAt).toISOString(),
      permissions,
      repository_selection: named ? 'selected' : 'all',
      repositories: (named ?? []).map((name, index) => ({
        id: index + 1,
        name,
        full_name: `${found.account}/${name}`,
      })),
    });
  }

  /** RS256 with the App's public key, iss = the App id, issued now (give or take a minute), ten minutes at most. */
  #verifyJwt(authorization: string): JwtCheck {
    const jwt = /^bearer (.+)$/i.exec(authorization)?.[1];
    if (!jwt) return { ok: false, reason: 'no bearer JWT', claims: null };
    const [header, payload, signature] = jwt.split('.');
    if (!header || !payload || !signature) return { ok: false, reason: 'not a JWT', claims: null };
    let claims: JwtCheck['claims'];
    try {
      if (JSON.parse(Buffer.from(header, 'base64url').toString()).alg !== 'RS256')
        return { ok: false, reason: 'not RS256', claims: null };
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    } catch {
      return { ok: false, reason: 'undecodable', claims: null };
    }
    const signed = Buffer.from(`${header}.${payload}`);
    if (!verify('sha256', signed, this.app.publicKey, Buffer.from(signature, 'base64url')))
      return { ok: false, reason: 'bad signature', claims };
    const now = Math.floor(Date.now() / 1000);
    const { iss, iat, exp } = claims ?? {};
    if (String(iss) !== String(this.app.id)) return { ok: false, reason: 'wrong iss', claims };
    if (typeof iat !== 'number' || typeof exp !== 'number') return { ok: false, reason: 'no iat/exp', claims };
    if (exp <= now || iat > now + 60 || exp - iat > 600) return { ok: false, reason: 'expired or too long', claims };
    return { ok: true, reason: null, claims };
  }
}
