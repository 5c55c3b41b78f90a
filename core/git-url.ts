// GitHub repository URLs: the forms users paste, normalised to one canonical https form.
// Pure: no I/O. Rejections carry a hint the API puts in its validation_error.

/** Where GitHub serves its repositories over git: a project's gitUrl starts with it. */
export const GITHUB_GIT_URL = 'https://github.com/';

export interface GitHubRepo {
  owner: string;
  name: string;
  /** https://github.com/<owner>/<name>: what svc stores as a project's gitUrl. */
  canonicalUrl: string;
  cloneUrl: string;
}

export type GitUrlResult = { ok: true; repo: GitHubRepo } | { ok: false; message: string; hint: string };

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const FORMS_HINT =
  'use https://github.com/<owner>/<repo>, github.com/<owner>/<repo>, git@github.com:<owner>/<repo>.git or ' +
  'ssh://git@github.com/<owner>/<repo>';

function reject(message: string, hint = FORMS_HINT): GitUrlResult {
  return { ok: false, message, hint };
}

function fromPath(host: string, path: string): GitUrlResult {
  if (host.toLowerCase() !== 'github.com') return reject(`only github.com repositories are supported, not ${host}`);
  const trimmed = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const parts = trimmed.split('/');
  if (parts.length !== 2) return reject(`"${path}" is not an <owner>/<repo> path`);
  const [owner, name] = parts as [string, string];
  for (const segment of [owner, name]) {
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..' || segment.startsWith('-')) {
      return reject(
        `"${segment}" is not a valid GitHub owner or repository name`,
        'names use letters, digits, ".", "_" and "-", and do not start with "-"',
      );
    }
  }
  // GitHub names are case-insensitive: one repository, one identity (and one clone), however typed.
  const [canonicalOwner, canonicalName] = [owner.toLowerCase(), name.toLowerCase()];
  const canonicalUrl = `https://github.com/${canonicalOwner}/${canonicalName}`;
  return {
    ok: true,
    repo: { owner: canonicalOwner, name: canonicalName, canonicalUrl, cloneUrl: `${canonicalUrl}.git` },
  };
}

export function parseGitHubUrl(input: string): GitUrlResult {
  const url = input.trim();
  if (!url) return reject('the git URL is empty');
  const scp = /^git@([^:/]+):(.+)$/.exec(url);
  if (scp) return fromPath(scp[1]!, scp[2]!);
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return reject(`"${url}" is not a valid URL`);
    }
    if (parsed.protocol === 'https:' || parsed.protocol === 'http:') {
      if (parsed.username || parsed.password)
        return reject(
          'credentials in the git URL are not accepted',
          'register the plain URL; svc authenticates with its own forge credentials',
        );
    } else if (parsed.protocol === 'ssh:') {
      if (parsed.username && parsed.username !== 'git')
        return reject(`ssh user "${parsed.username}" is not supported`, 'use ssh://git@github.com/<owner>/<repo>');
    } else {
      return reject(`the ${parsed.protocol} scheme is not supported`);
    }
    if (parsed.port) return reject('a port in the git URL is not supported');
    if (parsed.search || parsed.hash) return reject('a query or fragment in the git URL is not supported');
    return fromPath(parsed.hostname, decodeURIComponent(parsed.pathname));
  }
  const bare = /^([^/\s]+)\/(.+)$/.exec(url);
  if (bare && bare[1]!.includes('.')) return fromPath(bare[1]!, bare[2]!);
  return reject(`"${url}" is not a GitHub repository URL`);
}
