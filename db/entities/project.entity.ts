import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { ProjectJson } from '../../core/project-schema.ts';

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

/** Compiles only when T is true: a compile-time check with no runtime trace. */
type Assert<T extends true> = T;
/** Every field of the API's Project (core/project-schema.ts), which the project workflows carry, is a column. */
export type EveryProjectFieldIsAColumn = Assert<
  [Exclude<keyof ProjectJson, keyof Project>] extends [never] ? true : false
>;
