// The layers of docs/architecture.md ("Layers, bottom up"): who may import whom, in one place.
// scripts/eslint.config.js lints every import of a production file against them (rule svc/layers);
// test/architecture/import-graph.test.ts checks the whole import graph, and that the table says the same.
import { dirname, relative, resolve } from 'node:path';
import type { Rule } from 'eslint';

export interface Layer {
  dirs: string[];
  values: string[];
  types: string[];
}

/** The repository's root: paths below are relative to it. */
export const ROOT = resolve(import.meta.dirname, '..');

/**
 * Bottom up. A target is a top-level directory (`core`: every file under it) or one file. `values`:
 * what the layer's files may import (types too); `types`: what they may import types from only
 * (`import type`, or every named binding marked `type`). Every layer may import its own files.
 */
export const LAYERS: Layer[] = [
  { dirs: ['core'], values: [], types: [] },
  { dirs: ['platform'], values: ['core'], types: [] },
  { dirs: ['db'], values: ['core', 'platform'], types: [] },
  { dirs: ['workflows'], values: ['core'], types: ['*'] },
  // The sandbox runtime: the sweep reads which runs ended.
  { dirs: ['sandbox'], values: ['core', 'platform', 'db'], types: [] },
  // workflows/messages.ts: the signals, queries and updates, the one module of workflows/ others use.
  // sandbox/index.ts and sandbox/spec.ts: the sandbox's facade and shapes, nothing else of it.
  {
    dirs: ['activities'],
    values: ['core', 'platform', 'db', 'workflows/messages.ts', 'sandbox/index.ts', 'sandbox/spec.ts'],
    types: [],
  },
  {
    dirs: ['api'],
    values: ['core', 'platform', 'db', 'workflows/messages.ts'],
    types: ['workflows', 'activities'],
  },
  { dirs: ['worker', 'cli', 'stack', 'scripts'], values: ['*'], types: [] },
  {
    dirs: ['web'],
    // Renderings the dashboard shares with the CLI: pure modules whose value imports stay among them.
    values: ['core/event-text.ts', 'core/event-text-format.ts', 'core/project-name.ts'],
    types: ['api/routes/*.schema.ts', 'core'],
  },
];

const layerOf = (file: string): Layer | undefined => LAYERS.find((layer) => layer.dirs.includes(file.split('/')[0]));

function matches(target: string, file: string): boolean {
  if (target === '*') return true;
  if (!target.includes('/')) return file.split('/')[0] === target;
  if (!target.includes('*')) return file === target;
  const pattern = target.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  return new RegExp(`^${pattern}$`).test(file);
}

/**
 * Why `from` may not import `to` (both paths from the root), or null when it may. `typeOnly`: only
 * types cross the import.
 */
export function layerViolation(from: string, to: string, typeOnly: boolean): string | null {
  const own = layerOf(from);
  if (!own) return `${from.split('/')[0]}/ is in no layer: add it to docs/architecture.md and scripts/layers.ts`;
  const target = layerOf(to);
  if (!target) return `${to.split('/')[0]}/ is in no layer: add it to docs/architecture.md and scripts/layers.ts`;
  if (own === target) return null;
  if (own.values.some((allowed) => matches(allowed, to))) return null;
  if (own.types.some((allowed) => matches(allowed, to))) {
    return typeOnly ? null : `${from} may take only types from ${to} (import type)`;
  }
  return `${own.dirs.join('/, ')}/ may not import ${to} (docs/architecture.md, the layers)`;
}

/** An import's target as a path from the root, or null for a package or a builtin. */
export function resolveImport(fromFile: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return relative(ROOT, resolve(ROOT, dirname(fromFile), specifier));
}

// The parts of typescript-eslint's import nodes the rule reads (ESTree's own types lack the kinds).
type Kinded = { importKind?: string; exportKind?: string };
interface ModuleNode extends Kinded {
  specifiers?: Kinded[];
  source?: { value?: unknown } | null;
  argument?: { value?: unknown; literal?: { value?: unknown } };
}

const allTypes = (specifiers: Kinded[] | undefined, kind: keyof Kinded) =>
  specifiers !== undefined && specifiers.length > 0 && specifiers.every((specifier) => specifier[kind] === 'type');

const layersRule: Rule.RuleModule = {
  meta: { type: 'problem', schema: [], docs: { description: 'imports follow the layers of docs/architecture.md' } },
  create(context) {
    const file = relative(ROOT, context.filename);
    const check = (node: Rule.Node, source: { value?: unknown } | null | undefined, typeOnly: boolean) => {
      if (typeof source?.value !== 'string') return;
      const to = resolveImport(file, source.value);
      const problem = to && layerViolation(file, to, typeOnly);
      if (problem) context.report({ node, message: problem });
    };
    const on = (read: (node: ModuleNode) => [{ value?: unknown } | null | undefined, boolean]) => (node: Rule.Node) =>
      check(node, ...read(node as unknown as ModuleNode));
    return {
      ImportDeclaration: on((node) => [
        node.source,
        node.importKind === 'type' || allTypes(node.specifiers, 'importKind'),
      ]),
      ExportNamedDeclaration: on((node) => [
        node.source,
        node.exportKind === 'type' || allTypes(node.specifiers, 'exportKind'),
      ]),
      ExportAllDeclaration: on((node) => [node.source, node.exportKind === 'type']),
      ImportExpression: on((node) => [node.source, false]),
      TSImportType: on((node) => [node.argument?.literal ?? node.argument, true]),
    } as Rule.RuleListener;
  },
};

/** ESLint's side: each import of a file checked as it is written. */
export const layersPlugin = { rules: { layers: layersRule } };
