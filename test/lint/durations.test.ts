// Every duration string in the workflows (activity timeouts, retry intervals, timers) is one the
// Temporal SDK parses: a duration it cannot read fails the workflow task only when that activity is
// first scheduled (a `'2h15m'` once left every preview `starting` for ever).
import test from 'ava';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const KEYS = [
  'startToCloseTimeout',
  'scheduleToCloseTimeout',
  'scheduleToStartTimeout',
  'heartbeatTimeout',
  'initialInterval',
  'maximumInterval',
  'localRetryThreshold',
  'workflowRunTimeout',
  'workflowExecutionTimeout',
  'workflowTaskTimeout',
];
const DURATION_KEYS = new RegExp(`\\b(${KEYS.join('|')})\\s*:\\s*'([^']*)'`, 'g');

test('every duration string the workflows give Temporal parses', (t) => {
  const found: string[] = [];
  for (const file of readdirSync('workflows').filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(join('workflows', file), 'utf8');
    for (const [, key, value] of source.matchAll(DURATION_KEYS)) {
      found.push(`${file} ${key}: '${value}'`);
      t.notThrows(() => msToNumber(value as never), `${file} ${key}: '${value}'`);
      t.true(msToNumber(value as never) > 0, `${file} ${key}: '${value}'`);
    }
  }
  t.true(found.length >= 20, `only ${found.length} durations found: ${found.join(', ')}`);
  // The check itself: the string that once slipped through is refused.
  t.throws(() => msToNumber('2h15m' as never));
});
