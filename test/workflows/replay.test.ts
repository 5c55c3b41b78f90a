// Replays the recorded histories of every release still kept (test/fixtures/histories/<release>/)
// against today's workflow code: a non-deterministic change to a workflow (one that would break
// those in flight during an upgrade) fails here.
import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { HISTORIES, RELEASE, RELEASE_HISTORIES } from '../support/histories.ts';

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

const files = readdirSync(HISTORIES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap(({ name: release }) =>
    readdirSync(join(HISTORIES, release))
      .filter((name) => name.endsWith('.json'))
      .map((name) => join(release, name)),
  );
const workflowType = (file: string): string =>
  JSON.parse(readFileSync(join(HISTORIES, file), 'utf8')).events[0].workflowExecutionStartedEventAttributes.workflowType
    .name;

test('this release has a recorded history of every long-lived workflow type', (t) => {
  const recorded = new Set(files.filter((file) => file.startsWith(`${RELEASE}/`)).map(workflowType));
  for (const type of ['runWorkflow', 'pullRequestWorkflow', 'planRunWorkflow', 'healerWorkflow', 'admissionWorkflow'])
    t.true(recorded.has(type), `${type} in ${RELEASE_HISTORIES}`);
});

for (const file of files) {
  test(`replays ${file} deterministically`, async (t) => {
    const history = JSON.parse(readFileSync(join(HISTORIES, file), 'utf8'));
    t.true(history.events.length > 10, 'a real recorded history');
    // Closed: replay covers the whole run, not a prefix. `.prefix.json` files are of workflows that
    // do not close on their own (the admission queue, a healer's memory). A run's workflow closes as
    // the run ended: Completed, Failed or Canceled.
    if (!file.endsWith('.prefix.json'))
      t.true(
        CLOSED.includes(history.events.at(-1).eventType),
        `a closed history, not ${history.events.at(-1).eventType}`,
      );
    await t.notThrowsAsync(Worker.runReplayHistory({ workflowBundle }, history, file));
  });
}

test('a history the code no longer matches is reported as non-deterministic', async (t) => {
  const history = JSON.parse(readFileSync(join(RELEASE_HISTORIES, 'run-succeeded.json'), 'utf8'));
  // Pretend the recorded run had scheduled a different activity first.
  const scheduled = history.events.find((event: any) => event.activityTaskScheduledEventAttributes);
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'somethingElse';
  await t.throwsAsync(Worker.runReplayHistory({ workflowBundle }, history, 'tampered'), {
    name: 'DeterminismViolationError',
  });
});
