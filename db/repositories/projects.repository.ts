// The API's reads of registered projects and their trigger schedules: the services ask questions
// ("this project", "the project with this URL", "which repository each one is"), and how they are
// answered in SQL lives here. Writes are the activities' (activities/read-model/).
import { ProjectEntity, ProjectTriggerEntity, type Project, type ProjectTrigger } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** The project queries of the API, each on a fresh entity manager. */
export class ProjectsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Every project, in the order they were added. */
  all(): Promise<Project[]> {
    return this.#readModel.em().find(ProjectEntity, {}, { orderBy: { addedAt: 'asc', id: 'asc' } });
  }

  /** The project's row, or null when there is no such project. */
  find(id: string): Promise<Project | null> {
    return this.#readModel.em().findOne(ProjectEntity, { id });
  }

  /** The project registered for this canonical git URL, or null. */
  findByGitUrl(gitUrl: string): Promise<Project | null> {
    return this.#readModel.em().findOne(ProjectEntity, { gitUrl });
  }

  /** Every project's id and git URL (the spectator policy decides visibility from these). */
  async gitUrls(): Promise<{ id: string; gitUrl: string }[]> {
    const rows = await this.#readModel.em().find(ProjectEntity, { id: { $ne: '' } }, { fields: ['id', 'gitUrl'] });
    return rows.map((row) => ({ id: row.id, gitUrl: row.gitUrl }));
  }

  /** The schedules svc keeps for the project's triggers, in no particular order. */
  triggers(projectId: string): Promise<ProjectTrigger[]> {
    return this.#readModel.em().find(ProjectTriggerEntity, { projectId });
  }
}
