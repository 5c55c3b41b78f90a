// Project → the spec's Project JSON (§2.1).
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
