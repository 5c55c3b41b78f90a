// Project → the API's Project JSON (core/project-schema.ts).
import type { ProjectJson } from '../../core/project-schema.ts';
import type { Project } from '../../db/entities/index.ts';
import type { ProjectRecord } from '../../activities/read-model/project-store.ts';
import { iso } from './run.presenter.ts';

export function presentProject(project: Project | ProjectRecord): ProjectJson {
  return {
    id: project.id,
    gitUrl: project.gitUrl,
    localPath: project.localPath,
    defaultBranch: project.defaultBranch,
    addedAt: iso(project.addedAt)!,
    lastFetchedAt: iso(project.lastFetchedAt),
    lastHeadSha: project.lastHeadSha ?? null,
    hasSeeds: project.hasSeeds,
  };
}
