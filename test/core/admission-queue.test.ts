// The admission queue's rules (core/admission-queue.ts), driven directly: dispatch order, the two
// caps, a project's cap not holding up another project, repeated requests, releases.
import test from 'ava';
import {
  admit,
  describeWait,
  emptyAdmissionState,
  enqueue,
  release,
  runAdmission,
  type AdmissionRequest,
} from '../../core/admission-queue.ts';

const request = (runId: string, dispatchedAt: number, more: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  runId,
  projectId: null,
  dispatchedAt,
  instanceLimit: 2,
  projectLimit: null,
  ...more,
});
const ids = (requests: { runId: string }[]) => requests.map((entry) => entry.runId);

test('no limit at dispatch: the run does not ask at all', (t) => {
  t.is(runAdmission(null, null), null);
  t.deepEqual(runAdmission(3, null), { instanceLimit: 3, projectLimit: null });
});

test('slots go in dispatch order, whatever order the requests arrive in', (t) => {
  const state = emptyAdmissionState();
  for (const [id, at] of [
    ['c', 3],
    ['a', 1],
    ['d', 4],
    ['b', 2],
  ] as const)
    enqueue(state, request(id, at));
  const { granted, waiting } = admit(state);
  t.deepEqual(ids(granted), ['a', 'b']);
  t.deepEqual(
    waiting.map(({ waiter }) => waiter.runId),
    ['c', 'd'],
  );
  t.like(waiting[0]!.wait, { cap: 'instance', limit: 2, active: 2 });
  t.regex(describeWait(waiting[0]!.wait), /2 of the instance's 2 concurrent runs are taken/);
  t.true(release(state, 'a'));
  t.deepEqual(ids(admit(state).granted), ['c']);
  t.false(release(state, 'a'), 'a second release changes nothing');
  t.deepEqual(ids(admit(state).granted), []);
});

test("a project at its cap waits; another project's later run goes ahead", (t) => {
  const state = emptyAdmissionState();
  const limited = { projectId: 'prj_a', projectLimit: 1, instanceLimit: null };
  enqueue(state, request('a1', 1, limited));
  enqueue(state, request('a2', 2, limited));
  enqueue(state, request('b1', 3, { projectId: 'prj_b', instanceLimit: null }));
  const { granted, waiting } = admit(state);
  t.deepEqual(ids(granted), ['a1', 'b1']);
  t.like(waiting[0], { waiter: { runId: 'a2' }, wait: { cap: 'project', projectId: 'prj_a', limit: 1, active: 1 } });
  t.regex(describeWait(waiting[0]!.wait), /project prj_a has 1 of its 1 concurrent runs/);
});

test('the latest request carries the limits: a raised cap admits more at once', (t) => {
  const state = emptyAdmissionState();
  for (const [id, at] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    enqueue(state, request(id, at, { instanceLimit: 1 }));
  t.deepEqual(ids(admit(state).granted), ['a']);
  enqueue(state, request('d', 4, { instanceLimit: 3 }));
  t.deepEqual(ids(admit(state).granted), ['b', 'c']);
  t.is(state.waiters.length, 1);
});

test('a repeated request is known: a holder is answered again, nothing is queued twice', (t) => {
  const state = emptyAdmissionState();
  t.is(enqueue(state, request('a', 1)), 'new');
  admit(state);
  t.is(enqueue(state, request('a', 1)), 'holder');
  enqueue(state, request('b', 2, { instanceLimit: 1 }));
  t.is(enqueue(state, request('b', 2, { instanceLimit: 1 })), 'waiter');
  t.is(state.holders.length + state.waiters.length, 2);
});
