// A browser's navigation to a run or a plan-run is redirected to the dashboard, and that redirect
// is built only from an id of the run's (or plan-run's) own shape: whatever else a link puts in the
// path (another origin, a path that climbs, a header, a script) keeps the API's JSON answer, and
// every redirect stays on svc's own origin, under /ui/.
import test from 'ava';
import { navigate as visit } from '../support/navigate.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ worker: false });
});
test.after.always(async () => {
  await svc?.stop();
});

const navigate = (path: string) => visit(svc.url, path);

test('only a well-formed id is redirected, and only to its own page on this origin', async (t) => {
  const hostile = [
    '/runs/%2F%2Fevil.example',
    '/runs/%2F%2Fevil.example%2Frun_0123456789ab',
    '/runs/https:%2F%2Fevil.example',
    '/runs/run_0123456789ab%0d%0aLocation:%20https:%2F%2Fevil.example',
    '/runs/run_0123456789ab%3Fnext=https:%2F%2Fevil.example',
    '/runs/run_0123456789abc',
    '/runs/run_0123456789aB',
    '/runs/plnr_0123456789ab',
    '/plan-runs/run_0123456789ab',
    '/runs/..%2F..%2Fevil',
    '/runs/%3Cscript%3Ealert(1)%3C%2Fscript%3E',
    '/runs/run_0123456789ab/',
    '/runs//evil.example',
  ];
  for (const path of hostile) {
    const response = await navigate(path);
    t.false(response.status >= 300 && response.status < 400, `${path} redirected to ${response.location}`);
    t.is(response.location, null, path);
    t.is(response.contentType, 'application/json', path);
  }
  for (const [path, target] of [
    ['/runs/run_0123456789ab', '/ui/runs/run_0123456789ab'],
    ['/runs/run_0123456789ab?next=https://evil.example', '/ui/runs/run_0123456789ab'],
    ['/plan-runs/plnr_zyxwvtsrqpnm', '/ui/plan-runs/plnr_zyxwvtsrqpnm'],
  ] as const) {
    const response = await navigate(path);
    t.is(response.status, 303, path);
    t.is(response.location, target, path);
    // Relative to svc's own origin: no scheme, no authority.
    t.is(new URL(response.location!, svc.url).origin, new URL(svc.url).origin);
  }
});

test('a redirect reveals nothing: it is the same for a run that exists and one that does not', async (t) => {
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } });
  const real = await navigate(`/runs/${dispatched.body.run.id}`);
  const unknown = await navigate('/runs/run_zzzzzzzzzzzz');
  t.is(real.status, 303);
  t.is(unknown.status, 303);
  t.is(real.text, unknown.text.replace('run_zzzzzzzzzzzz', dispatched.body.run.id));
});
