// svc's known secrets masked by value: a weak value (a database password such as `postgres`)
// hides nothing but itself in svc's own log, never an ordinary word in an operator's view or a
// prompt; and text is masked before it is cut, so the cut never leaves a piece of a secret that no
// rule recognises. Each ava file is its own process: the registrations here touch no other test.
import test from 'ava';
import { MASK, MAX_REDACTED_TEXT, redactSecrets } from '../../core/redaction.ts';
import {
  maskKnownSecrets,
  maskSecretsForOperator,
  redactKnownSecrets,
  redactKnownSecretsAndCut,
  registerSecret,
} from '../../platform/secrets.ts';

test("a weak value is masked in svc's log only; a distinctive one wherever text leaves svc", (t) => {
  registerSecret('postgres');
  registerSecret('harbor-lantern-7731');
  t.is(maskKnownSecrets('connected to postgres'), `connected to ${MASK}`);
  t.is(maskSecretsForOperator('the agent ran postgres -D data'), 'the agent ran postgres -D data');
  t.is(redactKnownSecrets('a postgres database'), 'a postgres database');
  for (const mask of [maskKnownSecrets, maskSecretsForOperator, redactKnownSecrets])
    t.is(mask('key=harbor-lantern-7731!'), `key=${MASK}!`);
});

test('a secret the cut would split is masked whole, from either end', (t) => {
  const token = `ghp_${'a1B2'.repeat(9)}`;
  const text = `${'x '.repeat(50)}${token}${' y'.repeat(50)}`;
  // The last 120 characters start 20 characters before the token's end.
  const end = redactKnownSecretsAndCut(text, 120, 'end');
  t.true(end.cut);
  t.is(end.text.length, 120);
  t.false(end.text.includes(token.slice(-20)), end.text);
  const start = redactKnownSecretsAndCut(text, 120, 'start');
  t.false(start.text.includes(token.slice(0, 20)), start.text);
  // The long-text bound of every redaction: a token across it is masked, not cut in two.
  const long = `${'z '.repeat((MAX_REDACTED_TEXT - 10) / 2)}${token} and more`;
  const redacted = redactSecrets(long);
  t.true(redacted.endsWith('[… cut]'));
  t.false(redacted.includes(token.slice(0, 10)), 'no head of the token before the cut');
});
