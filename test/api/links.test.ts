// Where a run or a plan-run is seen: every answer about one links to its dashboard page (at
// SVC_PUBLIC_URL, else where the API listens), and a browser opening the API's URL of one is sent
// there instead of reading a JSON 401. API clients keep their JSON.
import test from 'ava';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { BROWSER_ACCEPT, navigate } from '../support/navigate.ts';
import { startTestStack } from '../support/stack.ts';

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: a run's answers link to its dashboard page; a browser's visit is sent there`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    // One leg behind a public URL (a proxy in front), the other at the address the API listens on.
    const publicUrl = leg === 'postgresql' ? 'https://svc.example.test' : null;
    const svc = await startTestStack({
      database: leg,
      worker: false,
      env: publicUrl ? { SVC_PUBLIC_URL: `${publicUrl}/` } : {},
    });
    t.teardown(() => svc.stop());
    const base = publicUrl ?? svc.url;

    const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } });
    t.is(dispatched.status, 201, JSON.stringify(dispatched.body));
    const id = dispatched.body.run.id as string;
    t.is(dispatched.body.links.dashboard, `${base}/ui/runs/${id}`);
    const read = await svc.request('GET', `/runs/${id}`);
    t.is(read.status, 200);
    t.deepEqual(read.body.links, { temporalUi: null, dashboard: `${base}/ui/runs/${id}` });

    // A browser's navigation (no token, HTML first) is sent to the page, on this origin.
    const visit = await navigate(svc.url, `/runs/${id}`);
    t.is(visit.status, 303);
    t.is(visit.location, `/ui/runs/${id}`);
    const page = await navigate(svc.url, visit.location!);
    t.is(page.status, 200);
    t.regex(page.text, /<div id="app"><\/div>/);
    const planVisit = await navigate(svc.url, '/plan-runs/plnr_0123456789ab', { 'sec-fetch-mode': '' });
    t.is(planVisit.status, 303);
    t.is(planVisit.location, '/ui/plan-runs/plnr_0123456789ab');

    // API clients keep the API's answer: a token, JSON asked for, curl's */*, a script's fetch.
    const withToken = await navigate(svc.url, `/runs/${id}`, { authorization: `Bearer ${svc.token}` });
    t.is(withToken.status, 200);
    t.is(JSON.parse(withToken.text).run.id, id);
    for (const headers of [
      { accept: 'application/json' },
      { accept: '*/*' },
      { accept: '' },
      { accept: BROWSER_ACCEPT, 'sec-fetch-mode': 'cors' },
    ] as Record<string, string>[]) {
      const response = await navigate(svc.url, `/runs/${id}`, headers);
      t.is(response.status, 401, JSON.stringify(headers));
      t.is(JSON.parse(response.text).error.code, 'unauthorized');
    }
    // Only the run's own URL: its sub-resources stay the API's.
    t.is((await navigate(svc.url, `/runs/${id}/events`)).status, 401);
  });
}
