// A worker without SVC_WORKFLOW_BUNDLE builds the workflows' bundle in a child process (webpack's
// memory ends with it): the code comes back, and the scratch directory does not stay behind.
import test from 'ava';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorkflowBundleApart } from '../../worker/workflow-bundle.ts';

test('the bundle built apart holds every workflow, and its scratch directory is gone', async (t) => {
  const scratch = join(mkdtempSync(join(tmpdir(), 'svc-bundle-')), 'programs');
  const bundle = await buildWorkflowBundleApart(scratch);
  for (const workflow of ['runWorkflow', 'planRunWorkflow', 'reconcileWorkflow'])
    t.true(bundle.code.includes(workflow), `${workflow} is in the bundle`);
  t.deepEqual(readdirSync(scratch), []);
});
