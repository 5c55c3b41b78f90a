// Response schemas of the agents routes (GET /agents, GET /agents/{name}).
import { z } from 'zod';

/** An agent as the API presents it (a spectator's without its definition). */
export const agentSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  source: z.enum(['builtin', 'config', 'project']),
  renderedJson: z.unknown(),
  registeredAt: z.string(),
  lastRefreshed: z.string(),
});
export const agentsResponse = z.object({ agents: z.array(agentSchema) });
