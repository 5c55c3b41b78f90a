// Which GitHub identity svc acts with, as the serve log, GET /github-app, `svc doctor` and the CLI
// say it: an installed App (from the environment or the data directory), else the personal access
// token, else none; and the App registered but not installed yet, if any. Never a secret.

export interface ForgeIdentity {
  mode: 'app' | 'pat' | 'anonymous';
  app: {
    source: 'env' | 'data-dir';
    appId: string;
    slug: string | null;
    installationId: string | null;
  } | null;
}

const SOURCES = { env: 'the environment', 'data-dir': 'the data directory' } as const;

/** The identity in a sentence. */
export function describeForgeIdentity(identity: ForgeIdentity): string {
  const { app } = identity;
  const named = app && `App ${app.slug ? `${app.slug} ` : ''}(id ${app.appId}) from ${SOURCES[app.source]}`;
  if (identity.mode === 'app' && named) return `the GitHub ${named}, installation ${app.installationId}`;
  const fallback =
    identity.mode === 'pat' ? 'the personal access token (SVC_GIT_TOKEN or GITHUB_TOKEN)' : 'no credential';
  return named ? `${fallback}; the ${named} is not installed yet` : fallback;
}
