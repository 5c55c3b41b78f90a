// Attack: break the run's own record from inside. An agent prints NUL characters, which PostgreSQL
// refuses in text and jsonb: if its output events could not be written, the supervising loop (which
// also enforces the run's cost cap) would fail at every attempt and the run would go unrecorded.
// On PostgreSQL, svc's production read model, the lines are kept with U+FFFD in place of each NUL
// and the run ends as the agent did.
import test from 'ava';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { postgresOrSkip } from '../support/env.ts';

let svc: TestStack | undefined;
test.after.always(() => svc?.stop());

test('an agent printing NUL characters cannot stop its output being recorded (PostgreSQL)', async (t) => {
  if (!postgresOrSkip(t, 'postgresql')) return;
  svc = await startTestStack({ database: 'postgresql' });
  const dispatched = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: "printf 'before\\000after\\n'; printf '\\000\\000\\n'; echo done" },
  });
  t.is(dispatched.status, 201);
  const run = await waitForRunState(svc, dispatched.body.run.id as string);
  t.is(run.state, 'succeeded');
  const lines = await runEvents(svc, run.id);
  const stdout = lines.filter((event) => event.stream === 'stdout').map((event) => event.payload.text);
  t.deepEqual(stdout, ['before\uFFFDafter', '\uFFFD\uFFFD', 'done']);
});
