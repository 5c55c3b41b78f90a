// Request and response schemas of the preview routes.
import { z } from 'zod';
import { PREVIEW_STATES } from '../../core/run-states.ts';
import { TEARDOWN_STATUSES } from '../../core/preview.ts';
import { PREVIEW_MODES } from '../../platform/preview-settings.ts';

export const previewConfigResponse = z.object({ mode: z.enum(PREVIEW_MODES), host: z.string().nullable() });

export const previewLoginBody = z.object({ redirect: z.string().min(1).max(2000).optional() }).strict();

export const previewLoginResponse = z.object({ url: z.string() });

// The limit is on what was sent (the OpenAPI document's maxLength), before the trim.
export const previewTeardownBody = z.object({ actor: z.string().max(200).trim().min(1).optional() }).strict();

export const previewTeardownResponse = z.object({
  status: z.enum(TEARDOWN_STATUSES),
  tornDown: z.boolean(),
  previousState: z.enum(PREVIEW_STATES).nullable(),
  port: z.number().int().nullable(),
});
