// Project → the API's Project JSON (api/routes/projects.schema.ts).
import type { Project } from '../../db/entities/index.ts';
import type { ProjectRecord } from '../../activities/read-model/project-store.ts';
import { iso } from './run.presenter.ts';

export function presentProject(project: Project | ProjectRecord) {
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
