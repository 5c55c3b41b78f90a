// A run's log for people: GET /runs/{id}/log (one human line per event, longer than a page, agent
// output inert) and GET /runs/{id}/events?before= (backward pages down to the first event), on
// both read models.
import test from 'ava';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { NOISY_SCRIPT, NUMBERED_LINES } from '../support/noisy-log.ts';
import { runEvents, startTestStack, waitForRunState } from '../support/stack.ts';

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (out  |err  |svc  |warn |error) \S/;

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: the text log has one human line per event; backward pages reach the first`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg });
    t.teardown(() => svc.stop());
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: NOISY_SCRIPT } })).body.run.id;
    t.is((await waitForRunState(svc, runId)).state, 'succeeded');
    const events = await runEvents(svc, runId);
    t.true(events.length > NUMBERED_LINES, 'more than two pages of events');

    const log = await svc.request('GET', `/runs/${runId}/log`);
    t.is(log.status, 200);
    t.regex(log.headers.get('content-type') ?? '', /^text\/plain; charset=utf-8/);
    const lines = log.text.split('\n');
    t.is(lines.pop(), '', 'every line ends with a newline');
    t.is(lines.length, events.length, 'one line per event');
    for (const [index, line] of lines.entries()) {
      t.regex(line, LINE);
      t.true(line.startsWith(events[index]!.ts), 'in seq order, with the event time to the millisecond');
    }
    t.true(lines.some((line) => /Z svc {3}Sandbox started \(/.test(line)));
    t.true(lines.some((line) => / svc {3}Run succeeded \(exit 0\)$/.test(line)));
    t.true(lines.includes(`${events.find((event) => event.payload?.text === 'line 1')!.ts} out   line 1`));
    t.true(lines.some((line) => line.endsWith(` out   line ${NUMBERED_LINES}`)));
    t.true(lines.some((line) => line.endsWith(' err   the end')));
    // Agent output is inert: colours dropped, every other control character written out.
    t.false(/[\u0000-\u0009\u000b-\u001f\u007f]/.test(log.text), 'no control character but newlines');
    t.true(lines.some((line) => line.endsWith(' out   bold red then green plain')));
    t.true(lines.some((line) => line.endsWith(' out   \\e]0;owned title\\u0007after title')));
    t.true(lines.some((line) => line.endsWith(' out   \\e[2J\\e[H\\e[5Acursor moved\\e[K')));
    t.false(log.text.includes('{"text"'), 'no raw payloads');

    // Backward pages: the last page, then each page before it, down to the first event.
    const page = async (query: string) =>
      (await svc.request('GET', `/runs/${runId}/events?${query}`)).text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { seq: number });
    const seqs = events.map((event) => (event as unknown as { seq: number }).seq);
    let before = Number.MAX_SAFE_INTEGER;
    const read: number[] = [];
    for (let pages = 0; pages < 10; pages++) {
      const lines = await page(`before=${before}&limit=500`);
      t.deepEqual(
        lines.map((line) => line.seq),
        seqs.filter((seq) => seq < before).slice(-500),
        'the 500 events just before the cursor, in seq order',
      );
      read.unshift(...lines.map((line) => line.seq));
      if (lines.length < 500) break;
      before = lines[0]!.seq;
    }
    t.deepEqual(read, seqs, 'the pages together are the whole log');
    t.deepEqual(
      (await page(`before=${seqs[10]}&since=${seqs[5]}`)).map((line) => line.seq),
      seqs.slice(6, 10),
    );
    t.is((await svc.request('GET', `/runs/${runId}/events?before=0`)).status, 400);
    t.is((await svc.request('GET', '/runs/run_missing00000/log')).status, 404);
  });
}
