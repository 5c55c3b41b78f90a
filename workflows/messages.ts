// Every signal, query and update the workflows answer, in one place, typed for both sides.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { RunSnapshot } from '../core/run-model.ts';

/** The run as the workflow holds it now. */
export const runSnapshotQuery = defineQuery<RunSnapshot>('runSnapshot');

/**
 * Sent with the workflow start (update-with-start): completes once the queued run is in the read
 * model, so a dispatch answer is always followed by a readable GET /runs/{id}.
 */
export const runAcceptedUpdate = defineUpdate<RunSnapshot>('runAccepted');
