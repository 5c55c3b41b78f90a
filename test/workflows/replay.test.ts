// Replays recorded histories against today's workflow code: a non-deterministic change to
// runWorkflow, pullRequestWorkflow, planRunWorkflow or healerWorkflow (one that would break those in
// flight during a deploy) fails here.
import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';

const HISTORIES = join('test', 'fixtures', 'histories');
const CLOSED = [
  'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
];
// Replays log every workflow task at INFO: only warnings and errors are worth reading here.
Runtime.install({ logger: new DefaultLogger('WARN') });

const workflowBundle = process.env.SVC_WORKFLOW_BUNDLE
  ? { code: readFileSync(process.env.SVC_WORKFLOW_BUNDLE, 'utf8') }
  : await buildWorkflowBundle();

for (const file of readdirSync(HISTORIES).filter((name) => name.endsWith('.json'))) {
  test(`replays ${file} deterministically`, async (t) => {
    const history = JSON.parse(readFileSync(join(HISTORIES, file), 'utf8'));
    t.true(history.events.length > 10, 'a real recorded history');
    // Closed: replay covers the whole run, not a prefix (`.prefix.json` files are kept on purpose). A
    // run's workflow closes as the run ended: Completed, Failed or Canceled.
    if (!file.endsWith('.prefix.json'))
      t.true(
        CLOSED.includes(history.events.at(-1).eventType),
        `a closed history, not ${history.events.at(-1).eventType}`,
      );
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowBundle }, history, file));
  });
}

test('a history the code no longer matches is reported as non-deterministic', async (t) => {
  const history = JSON.parse(readFileSync(join(HISTORIES, 'run-succeeded.json'), 'utf8'));
  // Pretend the recorded run had scheduled a different activity first.
  const scheduled = history.events.find((event: any) => event.activityTaskScheduledEventAttributes);
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'somethingElse';
  await t.throwsAsync(Worker.runReplayHistory({ workflowBundle }, history, 'tampered'), {
    name: 'DeterminismViolationError',
  });
});
