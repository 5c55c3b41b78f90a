import test from 'ava';
import { ID_ALPHABET, isId, newId } from '../../core/ids.ts';

test('ids carry their prefix and 12 chars of the unambiguous base32 alphabet', (t) => {
  for (const kind of ['project', 'run', 'planRun'] as const) {
    const id = newId(kind);
    t.regex(id, /^(prj|run|plnr)_[0-9a-hjkmnp-tv-z]{12}$/);
    t.true(isId(kind, id));
  }
  t.false(
    ID_ALPHABET.includes('i') || ID_ALPHABET.includes('l') || ID_ALPHABET.includes('o') || ID_ALPHABET.includes('u'),
  );
});

test('ids do not repeat', (t) => {
  const ids = new Set(Array.from({ length: 5000 }, () => newId('run')));
  t.is(ids.size, 5000);
});

test('isId rejects the wrong prefix and malformed bodies', (t) => {
  t.false(isId('project', newId('run')));
  t.false(isId('run', 'run_ABCDEFGHJKMN'));
  t.false(isId('run', 'run_short'));
});
