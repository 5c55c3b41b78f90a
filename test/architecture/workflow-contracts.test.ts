// Activities start the admission queue and webhook deliveries by the workflow's name, typed by a
// signature declared in core/ (activities take no types from workflows/: that made an import cycle
// through workflows/activity-proxies.ts). Here the name and the signature are held to the workflow.
import { readFileSync } from 'node:fs';
import test from 'ava';
import type { AdmissionWorkflow } from '../../core/admission-queue.ts';
import type { WebhookDeliveryWorkflow } from '../../core/webhooks.ts';
import { admissionWorkflow } from '../../workflows/admission.workflow.ts';
import { webhookDeliveryWorkflow } from '../../workflows/webhooks.workflow.ts';

// tsc fails here when a workflow's parameters or answer leave the signature its starter uses.
const declared: [AdmissionWorkflow, WebhookDeliveryWorkflow] = [admissionWorkflow, webhookDeliveryWorkflow];

test('the workflows activities start by name carry those names and their declared signatures', (t) => {
  t.deepEqual(
    declared.map((workflow) => workflow.name),
    ['admissionWorkflow', 'webhookDeliveryWorkflow'],
  );
  for (const [file, name] of [
    ['activities/admission-activities.ts', 'admissionWorkflow'],
    ['activities/webhook-activities.ts', 'webhookDeliveryWorkflow'],
  ] as const) {
    t.true(readFileSync(file, 'utf8').includes(`'${name}'`), `${file} starts ${name} by that name`);
  }
});
