// The API's reads of registered projects that are not a use-case of ProjectsService: which
// repository each project is (the spectator policy decides visibility from these).
import { ProjectEntity } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

export class ProjectsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Every project's id and git URL. */
  async gitUrls(): Promise<{ id: string; gitUrl: string }[]> {
    const rows = await this.#readModel.em().find(ProjectEntity, { id: { $ne: '' } }, { fields: ['id', 'gitUrl'] });
    return rows.map((row) => ({ id: row.id, gitUrl: row.gitUrl }));
  }
}
