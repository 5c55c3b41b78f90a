// The import graph of every production file (type-only imports included): no cycle, and no import
// against the layers of docs/architecture.md (scripts/layers.ts, which the linter applies file by
// file). A cycle makes a module's evaluation order depend on which file is loaded first, and ties
// layers that should build on each other into one.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { LAYERS, layerViolation } from '../../scripts/layers.ts';
import { cycles, importGraph, importsOf } from './import-graph.ts';

const graph = importGraph();

test('the graph covers the production files and their type-only imports', (t) => {
  const { files, edges } = graph;
  t.true(files.includes('api/server.ts') && files.includes('web/src/main.tsx'));
  t.false(files.some((file) => file.startsWith('test/') || file.startsWith('web/dist/')));
  t.true(edges.some((edge) => edge.typeOnly) && edges.some((edge) => !edge.typeOnly));
  t.true(edges.length > 1000, `only ${edges.length} imports found`);
});

test('no production file imports itself back through others', (t) => {
  const found = cycles(graph.files, graph.edges);
  t.deepEqual(
    found.map((cycle) => cycle.join(' → ')),
    [],
    `import cycles:\n${found.map((cycle) => `  ${cycle.join(' → ')}`).join('\n')}`,
  );
});

test('every import follows the layers', (t) => {
  const violations = graph.edges
    .map((edge) => ({ ...edge, problem: layerViolation(edge.from, edge.to, edge.typeOnly) }))
    .filter((edge) => edge.problem !== null)
    .map((edge) => `${edge.from} → ${edge.to}: ${edge.problem}`);
  t.deepEqual(violations, [], violations.join('\n'));
});

test('the checks find what they look for', (t) => {
  const edge = (from: string, to: string, typeOnly = false) => ({ from, to, typeOnly });
  const loop = cycles(
    ['a.ts', 'b.ts', 'c.ts', 'd.ts'],
    [edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts', true), edge('c.ts', 'a.ts'), edge('c.ts', 'd.ts')],
  );
  t.deepEqual(loop, [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  t.deepEqual(cycles(['a.ts'], [edge('a.ts', 'a.ts')]), [['a.ts', 'a.ts']]);
  t.deepEqual(
    importsOf(
      'x.ts',
      [
        "import type { A } from './a.ts';",
        "import { type B } from './b.ts';",
        "import { c, type C } from './c.ts';",
        "export type { D } from './d.ts';",
        "export * from './e.ts';",
        "const f = await import('./f.ts');",
        "let g: import('./g.ts').G;",
        "import './h.ts';",
      ].join('\n'),
    ),
    [
      { specifier: './a.ts', typeOnly: true },
      { specifier: './b.ts', typeOnly: true },
      { specifier: './c.ts', typeOnly: false },
      { specifier: './d.ts', typeOnly: true },
      { specifier: './e.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: false },
      { specifier: './g.ts', typeOnly: true },
      { specifier: './h.ts', typeOnly: false },
    ],
  );
  t.is(layerViolation('api/x.ts', 'activities/y.ts', true), null);
  t.regex(layerViolation('api/x.ts', 'activities/y.ts', false)!, /only types/);
  t.regex(layerViolation('core/x.ts', 'platform/y.ts', true)!, /may not import/);
  t.regex(layerViolation('nowhere/x.ts', 'core/y.ts', false)!, /in no layer/);
});

/** The rows of docs/architecture.md's layer table: the directories, and the targets named in backticks. */
function documentedLayers(): { dirs: string[]; targets: string[] }[] {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const table = doc.slice(
    doc.indexOf('## Layers, bottom up'),
    doc.indexOf('\n## ', doc.indexOf('## Layers, bottom up')),
  );
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!.replace(/\/$/, ''));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [, dirs, , may] = line.split('|');
      const own = ticked(dirs!);
      return { dirs: own, targets: ticked(may!).filter((target) => !target.startsWith('@') && !own.includes(target)) };
    });
}

test("docs/architecture.md's layer table says what the checks enforce", (t) => {
  t.deepEqual(
    documentedLayers(),
    LAYERS.map((layer) => ({
      dirs: layer.dirs,
      targets: [...layer.values, ...layer.types].filter((target) => target !== '*'),
    })),
  );
});
