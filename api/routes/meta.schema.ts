// Response schemas of the meta routes the dashboard reads.
import { z } from 'zod';

/** GET /whoami: who the caller is and what it may do. */
export const whoamiResponse = z.object({
  identity: z.enum(['operator', 'anonymous', 'run']),
  capabilities: z.array(z.string()),
  runId: z.string().optional(),
});
