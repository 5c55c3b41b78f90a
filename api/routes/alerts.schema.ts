// Request and response schemas of POST /alerts/heal: they validate requests and document the API.
import { z } from 'zod';
import { ALERT_SOURCES, HEAL_SKIP_REASONS } from '../../core/healer.ts';

export const healQuery = z
  .object({
    source: z.enum(ALERT_SOURCES).describe('Who sent the webhook: its body is parsed as that source posts it'),
  })
  .strict();

export const healBody = z
  .record(z.string(), z.unknown())
  .refine((body) => Object.keys(body).length > 0, 'must be a non-empty JSON object: the webhook as its source posts it')
  .describe('The raw Sentry (issue, event_alert or legacy plugin) or Grafana (unified alerting) webhook JSON');

const fingerprint = z.string().describe('The alert\'s stable identity: "sentry-<issue id>" or "grafana-<fingerprint>"');

export const healDispatchedResponse = z.object({
  status: z.literal('dispatched'),
  runId: z.string(),
  fingerprint,
  projectId: z.string(),
  source: z.enum(ALERT_SOURCES),
});

export const healSkippedResponse = z.object({
  status: z.literal('skipped'),
  reason: z
    .enum(HEAL_SKIP_REASONS)
    .describe(
      'disabled: no project heals, or only disabled ones take the alert; no_match: no enabled project claims ' +
        "the alert's source project with a rule that takes it; ambiguous: two projects take it equally " +
        'specifically; cooldown: a healer run of the fingerprint (healer.cooldownMinutes) or of the project ' +
        '(healer.projectCooldownMinutes) is too recent, or one is being dispatched; max_retries: the fingerprint ' +
        'had 1 + healer.maxRetries healer runs; ' +
        'busy: healer.maxConcurrentRuns healer runs of the project are unfinished',
    ),
  fingerprint,
  source: z.enum(ALERT_SOURCES),
});
