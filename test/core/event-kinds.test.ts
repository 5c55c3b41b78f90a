// The event vocabularies are catalogued once (core/event-kinds.ts), every entry is documented and
// written by svc's code, and every kind docs/events.md documents is written or mapped onto kinds
// that are (the interface's kinds svc tells with others).
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { INTERFACE_KINDS_WRITTEN_AS, LIFECYCLE_HOOKS, RUN_EVENT_KINDS } from '../../core/event-kinds.ts';

const docs = readFileSync('docs/events.md', 'utf8');
const catalogued = new Set<string>(RUN_EVENT_KINDS);

/** The code that writes events; the catalogue and the renderings name every kind and write none. */
const NOT_WRITERS = new Set(['core/event-kinds.ts', 'core/event-text.ts', 'core/event-text-format.ts']);
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}
const code = ['workflows', 'activities', 'sandbox', 'api', 'worker', 'core']
  .flatMap(sources)
  .filter((path) => !NOT_WRITERS.has(path))
  .map((path) => readFileSync(path, 'utf8'))
  .join('\n');
// A run event's kind is typed RunEventKind: svc writes only catalogued kinds (or agents' `agent.*`).
const written = (kind: string) => catalogued.has(kind) && code.includes(`'${kind}'`);

/** The backticked names in the first column of the table under `## <heading>` in docs/events.md. */
function firstColumn(heading: string): string[] {
  const section = docs.split(/^## /m).find((part) => part.startsWith(heading)) ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

test('every run event kind is documented in docs/events.md', (t) => {
  for (const kind of RUN_EVENT_KINDS) t.true(docs.includes(`\`${kind}\``), kind);
  t.is(new Set(RUN_EVENT_KINDS).size, RUN_EVENT_KINDS.length, 'no kind twice');
});

test('every lifecycle hook is documented in docs/events.md', (t) => {
  for (const hook of LIFECYCLE_HOOKS) t.regex(docs, new RegExp(`\\| \`${hook}\` \\|`), hook);
});

test("every catalogued kind is written by svc's code", (t) => {
  for (const kind of RUN_EVENT_KINDS) t.true(written(kind), `${kind}: catalogued, but nothing writes it`);
});

test('every documented kind is written by svc, or mapped onto kinds it writes', (t) => {
  const documented = firstColumn('Run event kinds');
  t.true(documented.length >= RUN_EVENT_KINDS.length, documented.join(', '));
  for (const kind of documented) t.true(written(kind), `${kind}: documented, but svc never writes it`);

  const rows = docs.split('\n').filter((line) => line.startsWith('| `'));
  const mapped = firstColumn('Kinds of the interface written as others');
  t.deepEqual([...mapped].sort(), Object.keys(INTERFACE_KINDS_WRITTEN_AS).sort(), 'the table and the mapping agree');
  for (const [kind, instead] of Object.entries(INTERFACE_KINDS_WRITTEN_AS)) {
    t.false(catalogued.has(kind), `${kind} is written: it is no interface kind told by others`);
    t.false(documented.includes(kind), `${kind} is documented as written and as mapped`);
    const row = rows.find((line) => line.startsWith(`| \`${kind}\` |`))!;
    for (const other of instead) {
      t.true(written(other), `${kind} maps onto ${other}, which svc never writes`);
      t.true(row.split('|')[2]!.includes(`\`${other}\``), `docs/events.md's row of ${kind} names ${other}`);
    }
  }
});
