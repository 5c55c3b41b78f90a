// The longest value each stored string may hold: one home for the API's validation (400 beyond it,
// shown as maxLength in the OpenAPI document), the project and agent files, and the read model's
// columns, so both databases take whatever the API accepts.

export const FIELD_LIMITS = {
  /** Ids svc mints (run_…, prj_…, plnr_…, msg_…) and their path parameters. */
  id: 32,
  idParam: 64,
  /** Names and references: agents, providers, models, seeds, plans, branches, refs, handles, actors. */
  name: 255,
  trigger: 64,
  triggerId: 128,
  cron: 128,
  timezone: 64,
  gitUrl: 512,
  /** A branch prefix (a slug): `<prefix>/<run id>` must stay a name. */
  branchPrefix: 64,
  promptTemplate: 65_536,
  reason: 1000,
} as const;

/** A run's free-form `metadata` object, as JSON. */
export const METADATA_MAX_BYTES = 16_384;
