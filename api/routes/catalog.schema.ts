// Response schemas of the agents routes (GET /agents, GET /agents/{name}).
import { z } from 'zod';
import { RUNTIME_IDS, STEERING_CAPABILITIES } from '../../core/agents.ts';
import { COST_BASES } from '../../core/run-states.ts';

/** An agent as the API presents it (a spectator's without its definition). */
export const agentSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  source: z.enum(['builtin', 'config', 'project']),
  runtime: z.enum(RUNTIME_IDS),
  /** `mid-run`: a message reaches it while it works; `spawn-only`: before it starts; `none`: never. */
  steering: z.enum(STEERING_CAPABILITIES),
  /** Whose figure its cost is: the provider's bill (`api`) or an estimate (`subscription_estimate`). */
  costBasis: z.enum(COST_BASES),
  /** The model credentials it takes from svc's environment (names only); the rest come from its env or secrets. */
  credentials: z.array(z.string()),
  renderedJson: z.unknown(),
  registeredAt: z.string(),
  lastRefreshed: z.string(),
});
export const agentsResponse = z.object({ agents: z.array(agentSchema) });
