// The event vocabularies are catalogued once (core/event-kinds.ts) and every entry is documented.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { LIFECYCLE_HOOKS, RUN_EVENT_KINDS } from '../../core/event-kinds.ts';

const docs = readFileSync('docs/events.md', 'utf8');

test('every run event kind is documented in docs/events.md', (t) => {
  for (const kind of RUN_EVENT_KINDS) t.true(docs.includes(`\`${kind}\``), kind);
  t.is(new Set(RUN_EVENT_KINDS).size, RUN_EVENT_KINDS.length, 'no kind twice');
});

test('every lifecycle hook is documented in docs/events.md', (t) => {
  for (const hook of LIFECYCLE_HOOKS) t.regex(docs, new RegExp(`\\| \`${hook}\` \\|`), hook);
});
