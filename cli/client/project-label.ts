// A project as the CLI prints it: `owner/repo (prj_…)`, as people name it with the id beside it;
// the id alone when the server does not say (a project deleted since, a spectator's hidden one).
import { projectName } from '../../core/project-name.ts';
import type { SvcClient } from './http.ts';
import type { ProjectResponse } from './responses.ts';

export async function projectLabel(client: SvcClient, projectId: string): Promise<string> {
  try {
    const { project } = await client.request<ProjectResponse>('GET', `/projects/${encodeURIComponent(projectId)}`);
    return `${projectName(project.gitUrl)} (${projectId})`;
  } catch {
    return projectId;
  }
}
