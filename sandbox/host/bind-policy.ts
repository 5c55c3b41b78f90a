// Which operator binds (SVC_SANDBOX_BINDS) a sandbox may not get: svc's own directories. A bind is
// refused when it is, holds or sits inside one of them, compared both as given and with its links
// resolved (a link to the data directory is the data directory).
import { realpathSync } from 'node:fs';

/** A path with its links resolved (as it stands now), or as given when it does not exist. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir.replace(/\/+$/, '')}/`);

/**
 * Whether a bind of `source` would show the sandbox one of the `forbidden` directories or svc's
 * compile cache (NODE_COMPILE_CACHE: code svc's own processes run, platform/compile-cache.ts).
 */
export function clashes(source: string, forbidden: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const secrets = [...forbidden, env.NODE_COMPILE_CACHE].filter((dir): dir is string => Boolean(dir));
  const forms = (path: string) => [...new Set([path, real(path)])];
  return forms(source).some(
    (bind) => bind === '/' || secrets.flatMap(forms).some((secret) => under(secret, bind) || under(bind, secret)),
  );
}
