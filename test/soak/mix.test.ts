// The soak's mix: every kind of agent gets its share of the runs, spread evenly.
import test from 'ava';
import { MIX, mixPicker } from './soak.ts';

test('the soak dispatches each agent of its mix in its share, at every point of the run', (t) => {
  const pick = mixPicker();
  const counts = new Map<string, number>();
  for (let run = 1; run <= 1000; run++) {
    const agent = pick();
    counts.set(agent, (counts.get(agent) ?? 0) + 1);
    for (const each of MIX)
      t.true(Math.abs((counts.get(each.agent) ?? 0) - each.share * run) < 1, `${each.agent} after ${run} runs`);
  }
  t.deepEqual(Object.fromEntries(counts), { short: 750, chatty: 50, failing: 100, cancelled: 100 });
});
