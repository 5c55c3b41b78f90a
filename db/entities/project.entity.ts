import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ProjectEntity = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: p.string().primary().length(32),
    gitUrl: p.string().length(512).unique(),
    localPath: p.text(),
    defaultBranch: p.string().length(255),
    addedAt: p.datetime(),
    lastFetchedAt: p.datetime().nullable(),
    lastHeadSha: p.string().length(64).nullable(),
    hasSeeds: p.boolean().default(false),
  },
});

export type Project = InferEntity<typeof ProjectEntity>;
