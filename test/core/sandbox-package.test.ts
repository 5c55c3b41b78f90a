// The sandbox runtime's shape (sandbox/, docs/decisions/0039-sandbox-package.md): no module imports
// another in a circle, type imports included; spec.ts is a leaf; the programs of inside/ import only
// node: modules and wire.ts (and types); nothing of the package imports its own facade; the API
// imports nothing of it.
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve('.');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every import of a module (static, dynamic, re-export), with whether it is for types only. */
function imports(file: string): { specifier: string; target: string | null; typeOnly: boolean }[] {
  const code = readFileSync(file, 'utf8');
  const found = [
    ...code.matchAll(/^(?:import|export)(\s+type)?\s[^;]*?from\s+['"]([^'"]+)['"]/gms),
    ...code.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return found.map((match) => {
    const specifier = match.length > 2 ? match[2]! : match[1]!;
    const typeOnly = match.length > 2 && Boolean(match[1]);
    const target = specifier.startsWith('.') ? relative(ROOT, resolve(dirname(file), specifier)) : null;
    return { specifier, target, typeOnly };
  });
}

const PACKAGE = files('sandbox').map((file) => relative(ROOT, file));

test('no module of sandbox/ imports another in a circle, type imports included', (t) => {
  const edges = new Map(PACKAGE.map((file) => [file, imports(file).flatMap(({ target }) => (target ? [target] : []))]));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') return void cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
    state.set(file, 'open');
    for (const next of edges.get(file) ?? []) if (edges.has(next)) visit(next, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of PACKAGE) visit(file, []);
  t.deepEqual(cycles, []);
});

test('spec.ts is a leaf: types only, from core/, platform/ and the Kubernetes client', (t) => {
  for (const { specifier, target, typeOnly } of imports('sandbox/spec.ts')) {
    t.true(typeOnly, specifier);
    t.true(
      specifier === '@kubernetes/client-node' || /^(core|platform)\//.test(target ?? ''),
      `spec.ts imports ${specifier}`,
    );
  }
});

test('the in-sandbox programs import node: modules and wire.ts, and types', (t) => {
  const inside = PACKAGE.filter((file) => file.startsWith('sandbox/inside/') && file !== 'sandbox/inside/programs.ts');
  t.true(inside.includes('sandbox/inside/sandbox-init.ts'));
  for (const file of inside)
    for (const { specifier, target, typeOnly } of imports(file))
      t.true(
        typeOnly || specifier.startsWith('node:') || target === 'sandbox/inside/wire.ts',
        `${file} imports ${specifier}`,
      );
});

test('the package never imports its own facade, and the API imports nothing of it', (t) => {
  for (const file of PACKAGE)
    t.false(
      imports(file).some(({ target }) => target === 'sandbox/index.ts'),
      `${file} imports sandbox/index.ts`,
    );
  for (const file of files('api'))
    for (const { target } of imports(file))
      t.false(target?.startsWith('sandbox/') ?? false, `${file} imports ${target}`);
});
