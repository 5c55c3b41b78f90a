// Schemas of the lifecycle routes: a line of GET /events/stream and an entry of GET /events.
import { z } from 'zod';
import { LIFECYCLE_HOOKS } from '../../core/event-kinds.ts';

/** One line of GET /events/stream: a run changed, so cached lists that show it are stale. */
export const lifecycleLine = z.object({
  runId: z.string(),
  hook: z.enum(LIFECYCLE_HOOKS),
  state: z.string().nullable(),
  ts: z.string(),
});
export const lifecycleEvent = lifecycleLine.extend({ id: z.number().int() });
