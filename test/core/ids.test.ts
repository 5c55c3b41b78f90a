import test from 'ava';
import { ID_ALPHABET, isId, newId } from '../../core/ids.ts';
import { MASK, maskSvcSecrets } from '../../core/redaction.ts';
import { mintRunToken, RUN_TOKEN_PATTERN } from '../../core/run-token.ts';

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

test("a run token's pattern and the masking of svc's tokens take the run id's shape from core/id-shape.ts", (t) => {
  const runId = newId('run');
  const token = mintRunToken('operator-token-of-some-length', runId);
  t.is(RUN_TOKEN_PATTERN.exec(token)?.[1], runId);
  t.is(maskSvcSecrets(`token ${token} here`), `token ${MASK} here`);
  // Not a run id (an `i` is outside the alphabet): no token.
  const notAnId = token.replace(runId, 'run_iiiiiiiiiiii');
  t.is(RUN_TOKEN_PATTERN.exec(notAnId), null);
  t.true(isId('run', runId) && !isId('run', 'run_iiiiiiiiiiii'));
});
