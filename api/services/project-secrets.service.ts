// A project's secrets: set, listed (names only), removed. Sealed at rest by the repository
// (db/repositories/project-secrets.repository.ts); read by the worker that launches a run.
import { MAX_SECRETS_PER_PROJECT, type SecretScope } from '../../core/project-secrets.ts';
import type { ProjectSecretsRepository } from '../../db/repositories/project-secrets.repository.ts';
import { registerSecret } from '../../platform/secrets.ts';
import { Errors } from '../errors.ts';
import type { ProjectsService } from './projects.service.ts';

export class ProjectSecretsService {
  readonly #rows: ProjectSecretsRepository;
  readonly #projects: Pick<ProjectsService, 'get'>;

  constructor(rows: ProjectSecretsRepository, projects: Pick<ProjectsService, 'get'>) {
    this.#rows = rows;
    this.#projects = projects;
  }

  async list(projectId: string) {
    const project = await this.#projects.get(projectId);
    return this.#rows.list(project.id);
  }

  /** Sets a secret; `created` says whether the name is new to the project. */
  async put(projectId: string, name: string, scope: SecretScope, value: string) {
    const project = await this.#projects.get(projectId);
    const known = (await this.#rows.list(project.id)).some((secret) => secret.name === name);
    if (!known && (await this.#rows.count(project.id)) >= MAX_SECRETS_PER_PROJECT)
      throw Errors.validation(
        `project ${project.id} already has ${MAX_SECRETS_PER_PROJECT} secrets`,
        'remove one it no longer needs (DELETE /projects/{id}/secrets/{name})',
      );
    // Masked in this process's log and views from now on, as svc's own secrets are.
    registerSecret(value);
    return this.#rows.put(project.id, name, scope, value);
  }

  async remove(projectId: string, name: string): Promise<void> {
    const project = await this.#projects.get(projectId);
    if (!(await this.#rows.remove(project.id, name)))
      throw Errors.notFound(
        `secret "${name}" of project ${project.id}`,
        `GET /projects/${project.id}/secrets lists them`,
      );
  }
}
