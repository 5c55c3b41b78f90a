import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

// The last retention pass of each data directory (a worker host's): what it removed and how many
// bytes that gave back, for `GET /ops/overview` and `svc ops`. One row per data directory, replaced
// by each pass, so the table never grows with time.
export const RetentionPassEntity = defineEntity({
  name: 'RetentionPass',
  tableName: 'retention_passes',
  properties: {
    /** The data directory's key (worker/data-dir-queue.ts): stable across restarts of its workers. */
    dataDirKey: p.string().primary().length(64),
    /** The host the pass ran on, as it calls itself. */
    host: p.string().length(255),
    finishedAt: p.datetime(),
    /** Items removed, by kind (workspaces, sandboxes, salvage, runEvents, …). */
    removed: p.json<Record<string, number>>(),
    /** Bytes given back, by kind (files only: the database's are its own to reclaim). */
    reclaimedBytes: p.json<Record<string, number>>(),
  },
});

export type RetentionPass = InferEntity<typeof RetentionPassEntity>;
