// Whether an npm install still matches the lockfile, for one of bootstrap's two installs: `runtime`
// (npm install --omit=dev: what svc serve needs) or `dev` (everything, for the tests). The stamp is
// the lockfile copied after that install; two lockfiles match when the packages that install puts on
// disk are the same (path, version, source, integrity). So moving a package between dependencies
// and devDependencies changes what `runtime` holds, and nothing of what `dev` holds.
//   node scripts/install-stamp.ts <runtime|dev> <stamp> <package-lock.json>    exit 0: up to date
import { existsSync, readFileSync } from 'node:fs';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
}

function installed(lockfile: string, mode: string): string {
  const packages = (JSON.parse(readFileSync(lockfile, 'utf8')) as { packages?: Record<string, LockEntry> }).packages;
  return Object.entries(packages ?? {})
    .filter(([path, entry]) => path !== '' && (mode === 'dev' || !entry.dev))
    .map(([path, entry]) => [path, entry.version, entry.resolved, entry.integrity, entry.link].join(' '))
    .sort()
    .join('\n');
}

const [mode, stamp, lockfile] = process.argv.slice(2);
if ((mode !== 'runtime' && mode !== 'dev') || !stamp || !lockfile) {
  process.stderr.write('usage: install-stamp.ts <runtime|dev> <stamp> <package-lock.json>\n');
  process.exit(2);
}
process.exit(existsSync(stamp) && installed(stamp, mode) === installed(lockfile, mode) ? 0 : 1);
