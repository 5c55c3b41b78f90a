// Project rows and their trigger rows. Written only by activities; the API reads.
import type { EntityManager } from '@mikro-orm/sql';
import type { ProjectJson } from '../../core/project-schema.ts';
import { ProjectEntity, ProjectSecretEntity, ProjectTriggerEntity, type Project } from '../../db/entities/index.ts';

/** A project as the project workflows carry it: the API's Project (core/project-schema.ts). */
export type ProjectRecord = ProjectJson;

export function toProjectRecord(row: Project): ProjectRecord {
  return {
    id: row.id,
    gitUrl: row.gitUrl,
    localPath: row.localPath,
    defaultBranch: row.defaultBranch,
    addedAt: row.addedAt.toISOString(),
    lastFetchedAt: row.lastFetchedAt?.toISOString() ?? null,
    lastHeadSha: row.lastHeadSha ?? null,
    hasSeeds: row.hasSeeds,
  };
}

export async function saveProject(em: EntityManager, record: ProjectRecord): Promise<ProjectRecord> {
  const data = {
    ...record,
    addedAt: new Date(record.addedAt),
    lastFetchedAt: record.lastFetchedAt ? new Date(record.lastFetchedAt) : null,
  };
  await em.transactional(async (tx) => {
    const existing = await tx.findOne(ProjectEntity, { id: record.id });
    if (existing) tx.assign(existing, data);
    else tx.create(ProjectEntity, data);
  });
  return record;
}

/** Removes the project row and its trigger rows in one transaction; runs stay (they are history). */
export async function deleteProjectRows(em: EntityManager, projectId: string): Promise<ProjectRecord | null> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(ProjectEntity, { id: projectId });
    if (!row) return null;
    const record = toProjectRecord(row);
    await tx.nativeDelete(ProjectTriggerEntity, { projectId });
    await tx.nativeDelete(ProjectSecretEntity, { projectId });
    tx.remove(row);
    return record;
  });
}
