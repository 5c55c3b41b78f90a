// The import graph of svc's production files: every .ts/.tsx/.mjs outside test/, node_modules/ and
// web/dist/, each relative import an edge (type-only ones included, with their kind).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string;
  to: string;
  /** Only types cross it: `import type`, `export type`, or every named binding marked `type`. */
  typeOnly: boolean;
}

const SOURCE = /\.(ts|tsx|mts|mjs)$/;

/** Production files, as paths from the repository's root (tracked or new, not ignored). */
export function productionFiles(root = '.'): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((path) => SOURCE.test(path))
    .filter((path) => !/^(test|node_modules|\.tools)\//.test(path) && !path.startsWith('web/dist/'))
    .filter((path) => !path.startsWith('db/migrations/') || !path.endsWith('.snapshot.json'));
}

function typeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import evaluates the module
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    !clause.name &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

function typeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return (
    clause !== undefined &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
  );
}

/** Every module specifier of one file with whether only types cross it. */
export function importsOf(path: string, text: string): { specifier: string; typeOnly: boolean }[] {
  const kind = extname(path) === '.tsx' ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: typeOnlyImport(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: typeOnlyExport(node) });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The edges between production files (imports of packages and builtins are not edges). */
export function importGraph(root = '.'): { files: string[]; edges: ImportEdge[] } {
  const files = productionFiles(root);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, typeOnly } of importsOf(from, readFileSync(join(root, from), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const to = normalize(join(dirname(from), specifier));
      if (!SOURCE.test(to)) continue; // a stylesheet or a JSON document: no code of svc's
      if (!known.has(to)) throw new Error(`${from} imports ${specifier}, which is no production file`);
      edges.push({ from, to, typeOnly });
    }
  }
  return { files, edges };
}

/** Every cycle as a path a → b → … → a: one per strongly connected component of two or more files, or a self-import. */
export function cycles(files: string[], edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) next.get(edge.from)!.push(edge.to);
  // Tarjan's strongly connected components, iteratively.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  for (const start of files) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = next.get(frame.node)!;
      if (frame.child < children.length) {
        const child = children[frame.child++]!;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || next.get(frame.node)!.includes(frame.node)) components.push(component);
      }
    }
  }
  return components.map((component) => cyclePath(component, next));
}

/** One concrete cycle through a strongly connected component, as the files it passes. */
function cyclePath(component: string[], next: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  // Breadth-first from start back to start inside the component: the shortest cycle through it.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of next.get(node)!) {
      if (!members.has(child)) continue;
      if (child === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  return [start, start];
}
