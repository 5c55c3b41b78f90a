// One errors catalogue: every code the API can send comes from api/errors.ts, is listed in
// docs/api.md with its status, and no route or service builds an error of its own.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Errors } from '../../api/errors.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('every catalogued code is documented in docs/api.md with its status', (t) => {
  const docs = readFileSync('docs/api.md', 'utf8');
  const factories = Errors as unknown as Record<string, (...args: string[]) => { code: string; status: number }>;
  for (const [name, make] of Object.entries(factories)) {
    const { code, status } = make('x', 'y', 'z');
    t.regex(docs, new RegExp(`\\| \`${code}\` \\| ${status} \\|`), `${name} → ${code} ${status}`);
  }
});

test('no error is built outside the catalogue (the envelope middleware maps foreign errors into it)', (t) => {
  const allowed = new Set(['api/errors.ts', 'api/middleware/error-envelope.ts']);
  const offenders = sources('api').filter(
    (path) => !allowed.has(path) && /new ApiError\(/.test(readFileSync(path, 'utf8')),
  );
  t.deepEqual(offenders, []);
});
